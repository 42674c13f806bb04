import { parse } from 'graphql';
import { SessionActivityDocument, TurnOutputDocument, TurnStatusChangedDocument, type SessionRowFragment } from '../../packages/client/src';
import { compareEventIds, ResumePoint, resumePlanOf } from '../../packages/client/src/resume';
import { assertUsageDays, fillUsageDays, usageWindow } from '../../src/domain/usage-days';
import { hrefOf, parseRoute } from '../../src/web/routes';
import { applyActivity, totalText, type SessionTable } from '../../src/web/session-rows';
import { hasTokenInFragment, readClaims, tokenProblem } from '../../src/web/token';
import { layoutUsageChart, niceScale, tickDecimals, turnsOf, type UsageDay } from '../../src/web/usage-chart';

describe('resuming a subscription', () => {
  it('resumes the status feeds by afterEventId and the text stream by delta index', () => {
    expect(resumePlanOf(SessionActivityDocument)).toEqual({ kind: 'event-id', field: 'sessionActivity', variable: 'afterEventId' });
    expect(resumePlanOf(TurnStatusChangedDocument)).toEqual({ kind: 'event-id', field: 'turnStatusChanged', variable: 'afterEventId' });
    expect(resumePlanOf(TurnOutputDocument)).toEqual({ kind: 'index', field: 'turnOutput' });
    expect(resumePlanOf(parse('subscription { feed: sessionActivity(afterEventId: $a) { eventId } }'))).toMatchObject({ field: 'feed', variable: 'a' });
  });

  it('refuses documents it could not resume without loss', () => {
    expect(() => resumePlanOf(parse('subscription { sessionActivity(afterEventId: "5") { eventId } }'))).toThrow(/as a variable/);
    expect(() => resumePlanOf(parse('subscription S($a: ID) { sessionActivity(afterEventId: $a) { status } }'))).toThrow(/select eventId/);
    expect(() => resumePlanOf(parse('query { me { roles } }'))).toThrow(/not a subscription/);
  });

  it('orders event ids as numbers of any length', () => {
    expect(['10', '9', '100', '11'].sort(compareEventIds)).toEqual(['9', '10', '11', '100']);
    expect(compareEventIds('12345678901234567890', '12345678901234567891')).toBeLessThan(0);
    expect(compareEventIds('7', '7')).toBe(0);
  });

  it('moves the resume point with each new event and drops repeats and older ones', () => {
    const point = new ResumePoint(resumePlanOf(SessionActivityDocument), { filter: { participantId: 'u' } });
    expect(point.needsStart).toBe(true);
    point.startAt('41');
    expect(point.variables()).toEqual({ filter: { participantId: 'u' }, afterEventId: '41' });
    const event = (id: string) => ({ sessionActivity: { eventId: id } });
    expect([point.accept(event('42')), point.accept(event('42')), point.accept(event('40')), point.accept(event('100'))]).toEqual([true, false, false, true]);
    expect(point.variables()).toMatchObject({ afterEventId: '100' });
    // A starting id the caller gave wins over the client's own.
    const given = new ResumePoint(resumePlanOf(SessionActivityDocument), { afterEventId: '7' });
    given.startAt('99');
    expect([given.needsStart, given.variables()]).toEqual([false, { afterEventId: '7' }]);
  });

  it('passes each text delta once, whatever a re-subscribe sends again', () => {
    const point = new ResumePoint(resumePlanOf(TurnOutputDocument), { sessionId: 's', turnId: 't' });
    const delta = (index: number) => ({ turnOutput: { index, textDelta: `${index}` } });
    const passed = [0, 1, 0, 1, 2, 3, 2].filter((i) => point.accept(delta(i)));
    expect(passed).toEqual([0, 1, 2, 3]);
    expect(point.variables()).toEqual({ sessionId: 's', turnId: 't' });
  });
});

describe('usage windows', () => {
  it('covers the given number of UTC days ending today, oldest first', () => {
    const { since, dates } = usageWindow(new Date('2026-03-01T23:30:00-05:00'), 3);
    expect(since.toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(dates).toEqual(['2026-02-28', '2026-03-01', '2026-03-02']);
  });

  it('fills days without turns and ignores rows outside the window', () => {
    const days = fillUsageDays(['2026-01-01', '2026-01-02'], [
      { date: '2026-01-02', status: 'COMPLETED', turns: 3, estimatedCostUsd: 0.1 },
      { date: '2026-01-02', status: 'FAILED', turns: 1, estimatedCostUsd: 0.2 },
      { date: '2025-12-31', status: 'COMPLETED', turns: 9, estimatedCostUsd: 9 },
    ]);
    expect(days).toEqual([
      { date: '2026-01-01', turns: { PENDING: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0 }, estimatedCostUsd: 0 },
      { date: '2026-01-02', turns: { PENDING: 0, COMPLETED: 3, FAILED: 1, CANCELLED: 0 }, estimatedCostUsd: 0.3 },
    ]);
  });

  it.each([1, 30, 366])('accepts %p days', (days) => expect(assertUsageDays(days)).toBe(days));
  it.each([0, 367, 2.5, Number.NaN])('refuses %p days', (days) => expect(() => assertUsageDays(days)).toThrow(/between 1 and 366/));
});

describe('the dashboard token', () => {
  const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;

  it('is recognised in a #token= fragment, which the page takes out of the address and never uses', () => {
    expect(hasTokenInFragment('#token=abc.def.ghi')).toBe(true);
    expect(hasTokenInFragment('#/sessions&token=abc.def.ghi')).toBe(true);
    expect(hasTokenInFragment('#token=')).toBe(true);
    expect(hasTokenInFragment('#/sessions')).toBe(false);
    expect(hasTokenInFragment('')).toBe(false);
  });

  it('is read for its user and expiry, and refused early when expired or not a JWT', () => {
    expect(readClaims(jwt({ sub: 'user-2', exp: 2000 }))).toEqual({ userId: 'user-2', expiresAt: 2000, issuer: null });
    expect(readClaims(jwt({ sub: 'user-2', exp: 2000, iss: 'https://id.acme.example/' }))?.issuer).toBe('https://id.acme.example/');
    expect(tokenProblem(jwt({ sub: 'u', exp: 2000 }), 1_999_000)).toBeNull();
    expect(tokenProblem(jwt({ sub: 'u', exp: 2000 }), 2_000_000)).toMatch(/expired/);
    expect(tokenProblem('not a token', 0)).toMatch(/not a token/);
    expect(tokenProblem('a.%%%.c', 0)).toMatch(/not a token/);
  });
});

describe('dashboard routes', () => {
  it('round-trips every page through the fragment and falls back to the sessions list', () => {
    for (const route of [{ page: 'sessions' }, { page: 'usage' }, { page: 'session', sessionId: 'a/b c' }] as const) {
      expect(parseRoute(hrefOf(route))).toEqual(route);
    }
    expect(parseRoute('')).toEqual({ page: 'sessions' });
    expect(parseRoute('#/nonsense')).toEqual({ page: 'sessions' });
  });
});

describe('live rows of the Sessions page', () => {
  const row = (id: string, lastTurnStatus: SessionRowFragment['lastTurnStatus'], turnCount = 1): SessionRowFragment => ({
    id,
    name: `session ${id}`,
    ownerUser: { id: 'u', text: 'U' },
    agentContextName: null,
    conversationContextName: null,
    lastTurnStatus,
    lastTurnDate: null,
    lastUpdatedDate: '2026-01-01T00:00:00.000Z',
    turnCount,
    participants: [],
  });
  const table: SessionTable = { rows: [row('a', 'PENDING'), row('b', 'COMPLETED')], totalCount: 40, totalCountIsLowerBound: false };
  const first = { firstPage: true, status: null };

  it('shows a capped count as a lower bound ("10,000+"), an exact one as it is', () => {
    const format = (n: number) => n.toLocaleString('en-US');
    expect(totalText({ ...table, totalCount: 10_000, totalCountIsLowerBound: true }, format)).toBe('10,000+');
    expect(totalText(table, format)).toBe('40');
  });

  it('updates a shown row in place, wherever it is', () => {
    const { table: next, applied } = applyActivity(table, { sequenceNumber: 1, status: 'COMPLETED', session: row('a', 'COMPLETED') }, first);
    expect(applied).toBe('updated');
    expect(next.rows.map((r) => `${r.id}:${r.lastTurnStatus}`)).toEqual(['a:COMPLETED', 'b:COMPLETED']);
    expect(next.totalCount).toBe(40);
    expect(applyActivity(table, { sequenceNumber: 1, status: 'COMPLETED', session: row('b', 'FAILED') }, { firstPage: false, status: 'COMPLETED' }).applied).toBe('updated');
  });

  it('puts a new session on top of the first page and counts it once', () => {
    const { table: next, applied } = applyActivity(table, { sequenceNumber: 1, status: 'PENDING', session: row('new', 'PENDING') }, first);
    expect(applied).toBe('inserted');
    expect(next.rows.map((r) => r.id)).toEqual(['new', 'a', 'b']);
    expect(next.totalCount).toBe(41);
    // An older session with new activity moves up without being counted again.
    const older = applyActivity(table, { sequenceNumber: 4, status: 'PENDING', session: row('old', 'PENDING', 4) }, first);
    expect([older.applied, older.table.totalCount]).toEqual(['inserted', 40]);
  });

  it('leaves later pages and sessions outside the status filter alone', () => {
    const event = { sequenceNumber: 1, status: 'PENDING' as const, session: row('new', 'PENDING') };
    expect(applyActivity(table, event, { firstPage: false, status: null }).applied).toBe('ignored');
    expect(applyActivity(table, event, { firstPage: true, status: 'FAILED' }).applied).toBe('ignored');
    expect(applyActivity(table, event, { firstPage: true, status: 'PENDING' }).applied).toBe('inserted');
  });
});

describe('the usage chart', () => {
  const day = (date: string, completed: number, failed: number, cost: number): UsageDay => ({
    date,
    completedTurns: completed,
    failedTurns: failed,
    cancelledTurns: 0,
    pendingTurns: 0,
    estimatedCostUsd: cost,
  });

  it('picks round axis tops and steps', () => {
    expect(niceScale(37, true)).toEqual({ max: 40, ticks: [0, 10, 20, 30, 40] });
    expect(niceScale(3, true)).toEqual({ max: 3, ticks: [0, 1, 2, 3] });
    // Whole steps for counts: never "2.5 turns".
    expect(niceScale(9, true)).toEqual({ max: 10, ticks: [0, 5, 10] });
    expect(niceScale(0.034, false).max).toBeCloseTo(0.04);
    expect(niceScale(0, true)).toEqual({ max: 1, ticks: [0, 1] });
  });

  it('labels cost ticks with as many decimals as their step needs', () => {
    const cents = niceScale(0.0145, false);
    expect(cents.ticks).toEqual([0, 0.005, 0.01, 0.015]);
    expect(tickDecimals(cents.ticks)).toBe(3);
    expect(tickDecimals([0, 0.25, 0.5])).toBe(2);
    expect(tickDecimals([0, 10, 20])).toBe(0);
  });

  it('stacks each day by status on a shared scale, with cost below, inside the drawing', () => {
    const days = [day('2026-01-01', 0, 0, 0), day('2026-01-02', 6, 2, 0.5), day('2026-01-03', 4, 0, 0.25)];
    const layout = layoutUsageChart(days, 600, 300);
    expect(layout.turns.scale.max).toBe(8);
    const [empty, busy, calm] = layout.days;
    expect(empty!.segments).toEqual([]);
    expect(busy!.segments.map((s) => [s.status, s.count])).toEqual([['completed', 6], ['failed', 2]]);
    // Stacked: failed sits on top of completed, and the full day reaches the top of the panel.
    expect(busy!.segments[1]!.y + busy!.segments[1]!.height).toBeCloseTo(busy!.segments[0]!.y);
    expect(busy!.segments[1]!.y).toBeCloseTo(layout.turns.top);
    expect(calm!.segments[0]!.height).toBeCloseTo(busy!.segments[0]!.height * (4 / 6));
    expect(calm!.cost.height).toBeCloseTo(busy!.cost.height / 2);
    expect(layout.cost.top).toBeGreaterThan(layout.turns.bottom);
    for (const d of layout.days) expect(d.column.x + d.column.width).toBeLessThanOrEqual(600);
    expect(turnsOf(days[1]!)).toBe(8);
  });

  it('labels fewer days when they are narrow, always including today', () => {
    const month = Array.from({ length: 30 }, (_, i) => day(`2026-01-${String(i + 1).padStart(2, '0')}`, 1, 0, 0));
    const wide = layoutUsageChart(month, 1200, 300);
    const narrow = layoutUsageChart(month, 340, 300);
    expect(wide.labelled.length).toBeGreaterThan(narrow.labelled.length);
    expect(narrow.labelled.at(-1)).toBe(29);
    expect(wide.labelled.at(-1)).toBe(29);
  });
});

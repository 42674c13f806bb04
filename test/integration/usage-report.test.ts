import { DomainError } from '../../src/domain/errors';
import type { UsageByDay } from '../../src/domain/usage-days';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { UsageReport } from '../../src/sessions/usage-report';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice, bob, boss, globexAdmin } from '../support/testkit/users';

/** Today in these tests; the window of 3 days is 2026-03-08 .. 2026-03-10 (UTC). */
const TODAY = new Date('2026-03-10T15:00:00.000Z');

function usageSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let clock: Date;
  let sessions: SessionStore['lifecycle'];
  let report: UsageReport;

  beforeAll(async () => {
    t = await open();
    sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined }, now: () => clock }).lifecycle;
    report = new UsageReport(t.db, () => TODAY);
    // Written in time order, as a real clock would: a session's lastUpdatedDate never goes back.
    const at = (iso: string) => {
      clock = new Date(iso);
    };
    at('2026-03-07T23:59:59.999Z'); // the last moment before the window
    const aliceSession = await sessions.createSession(alice, { name: 'alice work', agentContextId: 'ac' });
    const bobSession = await sessions.createSession(bob, { name: 'bob work', agentContextId: 'ac', isPublic: true });
    const globexSession = await sessions.createSession(globexAdmin, { name: 'globex', agentContextId: 'ac' });
    const done = async (caller: typeof alice, sessionId: string, cost: number | null) => {
      const turn = await sessions.addTurn(caller, sessionId, { instructionSummary: 'work' });
      await sessions.completeTurn(caller, sessionId, turn.id, {
        agentAnswerSummary: 'ok',
        fullAgentAnswerUrl: null,
        openAIResponseId: null,
        openAIResponseReceivedDate: clock,
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, estimatedCostUsd: cost, isEstimated: false },
      });
    };
    await done(alice, aliceSession.id, 5); // before the window: not counted

    at('2026-03-08T00:00:00.000Z'); // the first moment of the window
    await done(alice, aliceSession.id, 0.25);
    await done(bob, bobSession.id, 0.5);
    const failed = await sessions.addTurn(bob, bobSession.id, { instructionSummary: 'x' });
    await sessions.failTurn(bob, bobSession.id, failed.id, { errors: ['boom'] });

    at('2026-03-09T12:00:00.000Z'); // nothing on the 9th but in another org
    await done(globexAdmin, globexSession.id, 100);

    at('2026-03-10T09:30:00.000Z');
    await done(alice, bobSession.id, null); // alice's turn in bob's session; no price known
    const cancelled = await sessions.addTurn(alice, aliceSession.id, { instructionSummary: 'x' });
    await sessions.cancelTurn(alice, aliceSession.id, cancelled.id);
    await sessions.addTurn(bob, bobSession.id, { instructionSummary: 'still running' });
    await done(alice, aliceSession.id, 0.125);
    // The session goes away; the money it cost does not.
    await sessions.deleteSession(alice, aliceSession.id);
  });
  afterAll(async () => t.dispose());

  const compact = (usage: UsageByDay) =>
    usage.days.map((d) => `${d.date} P${d.turns.PENDING} C${d.turns.COMPLETED} F${d.turns.FAILED} X${d.turns.CANCELLED} $${d.estimatedCostUsd}`);

  it("gives an admin the whole organisation's turns per UTC day and status, every day of the window, oldest first", async () => {
    const usage = await report.usageByDay(boss, 3);
    expect(usage.scope).toBe('ORGANIZATION');
    expect(compact(usage)).toEqual([
      '2026-03-08 P0 C2 F1 X0 $0.75',
      '2026-03-09 P0 C0 F0 X0 $0',
      '2026-03-10 P1 C2 F0 X1 $0.125',
    ]);
  });

  it("gives anyone else only the turns they created, wherever they created them", async () => {
    expect(compact(await report.usageByDay(alice, 3))).toEqual([
      '2026-03-08 P0 C1 F0 X0 $0.25',
      '2026-03-09 P0 C0 F0 X0 $0',
      '2026-03-10 P0 C2 F0 X1 $0.125',
    ]);
    const bobs = await report.usageByDay(bob, 3);
    expect(bobs.scope).toBe('CALLER');
    expect(compact(bobs)).toEqual(['2026-03-08 P0 C1 F1 X0 $0.5', '2026-03-09 P0 C0 F0 X0 $0', '2026-03-10 P1 C0 F0 X0 $0']);
  });

  it('widens the window day by day, and never counts another organisation', async () => {
    const four = await report.usageByDay(boss, 4);
    expect(four.days.map((d) => d.date)).toEqual(['2026-03-07', '2026-03-08', '2026-03-09', '2026-03-10']);
    expect(compact(four)[0]).toBe('2026-03-07 P0 C1 F0 X0 $5');
    const one = await report.usageByDay(boss, 1);
    expect(compact(one)).toEqual(['2026-03-10 P1 C2 F0 X1 $0.125']);
    const globex = await report.usageByDay(globexAdmin, 3);
    expect(compact(globex)[1]).toBe('2026-03-09 P0 C1 F0 X0 $100');
    expect(globex.days.reduce((n, d) => n + d.turns.COMPLETED, 0)).toBe(1);
  });

  it.each([0, -1, 367, 1.5])('refuses days = %p as bad input', async (days) => {
    await expect(report.usageByDay(boss, days)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' } satisfies Partial<DomainError>);
  });
}

describe('usage by day on SQLite', () => usageSuite(sqliteTestDatabase));
describeWithMysql('usage by day on MySQL', () => usageSuite(mysqlTestDatabase));

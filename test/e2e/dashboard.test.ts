import jwt from 'jsonwebtoken';
import type { Caller } from '../../src/domain/caller';
import type { Page } from 'playwright-core';
import { DASHBOARD_WAIT as WAIT, launchBrowser, startDashboard, type BrowserHistory, type DashboardFixture, type WatchedPage } from '../support/browser';
import { describeWithBrowser } from '../support/services';
import { startTcpProxy } from '../support/tcp-proxy';
import { alice, bob, boss, EXECUTE, EXECUTE_ASYNC } from '../support/testkit';

const SECRET = 'e2e-dashboard-secret-e2e-dashboard-secret-0';

interface SessionList {
  agentSessions: { totalCount: number; edges: { node: { id: string; lastTurnStatus: string | null } }[] };
}
const LIST = `query L($filter: AgentSessionFilter) { agentSessions(first: 25, filter: $filter) { totalCount edges { node { id lastTurnStatus } } } }`;

describeWithBrowser('the dashboard in Chromium', () => {
  let dash: DashboardFixture;
  let agentContextId: string;
  const sessions: Record<'aliceOne' | 'aliceTwo' | 'bobPrivate' | 'bobPublic', string> = { aliceOne: '', aliceTwo: '', bobPrivate: '', bobPublic: '' };

  const execute = async (caller: Caller, input: Record<string, unknown>) =>
    (await dash.gql<{ execute: { sessionId: string; turnId: string } }>(caller, EXECUTE, { input: { agentContextId, ...input } })).execute;
  const executeAsync = async (caller: Caller, input: Record<string, unknown>) =>
    (await dash.gql<{ executeAsync: { sessionId: string; turnId: string } }>(caller, EXECUTE_ASYNC, { input: { agentContextId, ...input } })).executeAsync;
  const turnStatus = async (caller: Caller, sessionId: string, turnId: string) =>
    (await dash.gql<{ agentSessionTurn: { status: string } }>(caller, 'query T($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { status } }', { s: sessionId, t: turnId }))
      .agentSessionTurn.status;

  /** Pastes `token` into the sign-in form of a page that shows it. */
  async function paste(page: Page, token: string): Promise<void> {
    await page.locator('#token-input').waitFor(WAIT);
    await page.fill('#token-input', token);
    await page.click('form.sign-in button[type="submit"]');
  }

  /** A new tab signed in as `caller` through the sign-in form, showing the Sessions page. */
  async function signIn(caller: Caller, viewport?: { width: number; height: number }): Promise<WatchedPage> {
    const watched = await dash.signIn(caller, viewport);
    await watched.page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    return watched;
  }
  const rowIds = async (w: WatchedPage) => {
    const rows = w.page.locator('[data-testid="session-row"]');
    return Promise.all(Array.from({ length: await rows.count() }, (_, i) => rows.nth(i).getAttribute('data-session-id')));
  };
  const shownTotal = async (w: WatchedPage) => Number((await w.page.textContent('[data-testid="total-count"]'))?.replace(/\D/g, ''));
  const rowStatus = (w: WatchedPage, sessionId: string) => w.page.locator(`[data-testid="session-row"][data-session-id="${sessionId}"] [data-testid="session-status"]`);
  const turnRowStatus = (w: WatchedPage, turnId: string) => w.page.locator(`[data-testid="turn-row"][data-turn-id="${turnId}"] [data-testid="turn-status"]`);
  /** Polls `check` (page reads, in the order the caller needs) until it holds. */
  async function until(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + WAIT.timeout;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const texts = (w: WatchedPage, selector: string) => w.page.locator(selector).allTextContents();
  const textBecomes = (w: WatchedPage, selector: string, text: string) =>
    until(`${selector} to read "${text}"`, async () => (await texts(w, selector))[0] === text);

  beforeAll(async () => {
    dash = await startDashboard({ name: 'dashboard', secret: SECRET, openai: true });
    agentContextId = (
      await dash.gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }')
    ).upsertAgentContext.id;
    sessions.aliceOne = (await execute(alice, { instruction: 'First question of alice', sessionName: 'alice one' })).sessionId;
    sessions.bobPrivate = (await execute(bob, { instruction: 'Private work of bob', sessionName: 'bob private' })).sessionId;
    sessions.bobPublic = (await execute(bob, { instruction: 'Public work of bob', sessionName: 'bob public' })).sessionId;
    await dash.gql(bob, 'mutation M($id: ID!) { updateAgentSession(id: $id, patch: { isPublic: true }) { id } }', { id: sessions.bobPublic });
    // alice joins bob's public session by adding a turn to it.
    await execute(alice, { sessionId: sessions.bobPublic, instruction: 'alice chimes in' });
    sessions.aliceTwo = (await execute(alice, { instruction: 'Second question of alice', sessionName: 'alice two' })).sessionId;
  }, 60_000);

  afterAll(() => dash?.close());

  it('signs in with a pasted token kept in the tab, and never puts it in an address: Chromium\'s history holds none', async () => {
    // A browser of its own, so its history holds this test's visits only.
    const own = await launchBrowser();
    const token = dash.tokenOf(alice);
    const sessionUrl = `${dash.server.url}/dashboard#/sessions/${sessions.aliceOne}`;
    const decoy = `decoy-${Date.now()}`;
    const requested: string[] = [];
    let history: BrowserHistory;
    try {
      const watched = await own.open();
      watched.page.on('request', (request) => requested.push(request.url()));
      await watched.page.goto(`${dash.server.url}/dashboard`);
      await paste(watched.page, token);
      await watched.page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
      expect(await watched.page.evaluate('sessionStorage.getItem("agent-session-gateway.token")')).toBe(token);
      expect(await watched.page.textContent('.who')).toContain('Name of alice');
      // Around the pages, and a reload: the tab stays signed in from its storage.
      await watched.page.click('nav a[data-page="usage"]');
      await watched.page.locator('svg[data-testid="usage-chart"]').waitFor(WAIT);
      await watched.page.goto(sessionUrl);
      await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
      await watched.page.reload();
      await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
      expect(await watched.page.textContent('.who')).toContain('Name of alice');
      // What the history would show of a token in an address: Chromium records it although the page replaces it at once.
      await watched.page.goto(`${dash.server.url}/dashboard#token=${decoy}`);
      await until('the decoy to leave the address', async () => new URL(watched.page.url()).hash === '#/sessions');
      expect(watched.problems).toEqual([]);
    } finally {
      history = await own.closeAndReadHistory();
    }
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => url.includes(token))).toEqual([]);
    // The control: the history does record the addresses, fragments included.
    expect(history.urls).toEqual(expect.arrayContaining([`${dash.server.url}/dashboard`, `${dash.server.url}/dashboard#/usage`, sessionUrl]));
    expect(history.contains(sessions.aliceOne)).toBe(true);
    expect(history.urls).toContain(`${dash.server.url}/dashboard#token=${decoy}`);
    // And no part of the token: not whole, not its signature.
    const signature = token.split('.')[2]!;
    expect(history.urls.filter((url) => url.includes(signature))).toEqual([]);
    expect([history.contains(token), history.contains(signature)]).toEqual([false, false]);
  });

  it('never signs in from a token in the address: it takes it out and asks for it to be pasted', async () => {
    const { page, problems } = await dash.browser.open();
    const bobs = dash.tokenOf(bob);
    await page.goto(`${dash.server.url}/dashboard#token=${bobs}`);
    await page.locator('#sign-in-message', { hasText: 'not used' }).waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe('#/sessions');
    expect(await page.evaluate('sessionStorage.getItem("agent-session-gateway.token")')).toBeNull();
    await paste(page, bobs);
    await page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    expect(await page.textContent('.who')).toContain('Name of bob');
    // A link with another token opened in the signed-in tab changes nothing either.
    await page.goto(`${dash.server.url}/dashboard#token=${dash.tokenOf(alice)}`);
    await until('the token to leave the address', async () => new URL(page.url()).hash === '#/sessions');
    expect(await page.textContent('.who')).toContain('Name of bob');
    expect(await page.evaluate('sessionStorage.getItem("agent-session-gateway.token")')).toBe(bobs);
    expect(problems).toEqual([]);
  });

  it('explains why a pasted token cannot be used, and signs in with a good one', async () => {
    const { page, problems } = await dash.browser.open();
    await page.goto(`${dash.server.url}/dashboard`);
    const signInWith = async (token: string) => {
      await page.fill('#token-input', token);
      await page.click('form.sign-in button[type="submit"]');
    };
    await signInWith(jwt.sign({ sub: 'alice', org: 'acme', exp: Math.floor(Date.now() / 1000) - 60 }, SECRET));
    await page.locator('#sign-in-message', { hasText: 'expired' }).waitFor(WAIT);
    await signInWith('definitely not a token');
    await page.locator('#sign-in-message', { hasText: 'not a token' }).waitFor(WAIT);
    expect(problems).toEqual([]);
    // Well formed, but signed with another secret: only the gateway can tell.
    await signInWith(jwt.sign({ sub: 'alice', org: 'acme', exp: Math.floor(Date.now() / 1000) + 600 }, 'another-secret-another-secret-another-secret'));
    await page.locator('#sign-in-message', { hasText: 'refused' }).waitFor(WAIT);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.includes('401'))).toBe(true);
    problems.length = 0;
    await signInWith(`Bearer ${dash.tokenOf(bob)}`);
    await page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    expect(await page.textContent('.who')).toContain('Name of bob');
    expect(problems).toEqual([]);
  });

  it('shows a non-admin exactly the sessions and total the API shows them', async () => {
    const watched = await signIn(alice);
    const api = await dash.gql<SessionList>(alice, LIST);
    expect(api.agentSessions.edges.map((e) => e.node.id)).not.toContain(sessions.bobPrivate);
    expect(await rowIds(watched)).toEqual(api.agentSessions.edges.map((e) => e.node.id));
    expect(await shownTotal(watched)).toBe(api.agentSessions.totalCount);
    const participants = await watched.page.textContent(`[data-session-id="${sessions.bobPublic}"] [data-testid="session-participants"]`);
    expect(participants).toContain('Name of bob');
    expect(participants).toContain('Name of alice');
    expect(watched.problems).toEqual([]);
  });

  it('filters by participant exactly as the API does (Enter applies the filter)', async () => {
    const watched = await signIn(boss);
    const everything = await dash.gql<SessionList>(boss, LIST);
    const api = await dash.gql<SessionList>(boss, LIST, { filter: { participantId: alice.userId } });
    expect(api.agentSessions.totalCount).toBeLessThan(everything.agentSessions.totalCount);
    await watched.page.fill('[data-testid="participant-filter"]', alice.userId);
    await watched.page.press('[data-testid="participant-filter"]', 'Enter');
    await textBecomes(watched, '[data-testid="total-count"]', String(api.agentSessions.totalCount));
    await until('the filtered rows', async () => (await rowIds(watched)).length === api.agentSessions.edges.length);
    expect(await rowIds(watched)).toEqual(api.agentSessions.edges.map((e) => e.node.id));
    expect(await texts(watched, '[data-testid="session-status"]')).toEqual(api.agentSessions.edges.map((e) => e.node.lastTurnStatus));
    expect(watched.problems).toEqual([]);
  });

  it('turns a row from PENDING to COMPLETED live and puts a new session on top, without a reload', async () => {
    const watched = await signIn(boss);
    await watched.page.evaluate('window.stillTheSamePage = true');
    const before = await shownTotal(watched);
    await watched.page.locator('.live', { hasText: 'Live' }).waitFor(WAIT);
    dash.openai.enqueue({ kind: 'text', chunks: ['slowly ', 'but ', 'surely ', 'done.'], delayMs: 400 });
    await executeAsync(bob, { sessionId: sessions.bobPrivate, instruction: 'Take your time' });
    await rowStatus(watched, sessions.bobPrivate).filter({ hasText: 'PENDING' }).waitFor(WAIT);
    await rowStatus(watched, sessions.bobPrivate).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);

    const fresh = await executeAsync(alice, { instruction: 'A brand new session', sessionName: 'brand new' });
    await until('the new session on top', async () => (await rowIds(watched))[0] === fresh.sessionId);
    await textBecomes(watched, '[data-testid="total-count"]', String(before + 1));
    expect(await watched.page.evaluate('window.stillTheSamePage')).toBe(true);
    expect(watched.problems).toEqual([]);
  });

  it('catches up after a dropped connection: what changed meanwhile shows up once it is back', async () => {
    // The browser reaches the gateway only through a proxy the test can cut.
    const proxy = await startTcpProxy('127.0.0.1', Number(new URL(dash.server.url).port));
    try {
      const watched = await dash.browser.open();
      await watched.page.goto(`http://127.0.0.1:${proxy.port}/dashboard`);
      await paste(watched.page, dash.tokenOf(boss));
      await watched.page.locator('.live[data-state="connected"]').waitFor(WAIT);
      const before = await shownTotal(watched);
      proxy.cut();
      await watched.page.locator('.live[data-state="disconnected"]').waitFor(WAIT);
      dash.openai.enqueue({ kind: 'failed', message: 'the model gave up' });
      const failing = await executeAsync(bob, { sessionId: sessions.bobPublic, instruction: 'Fail while nobody watches' });
      await until('the turn to fail', async () => (await turnStatus(bob, sessions.bobPublic, failing.turnId)) === 'FAILED');
      const fresh = await executeAsync(bob, { instruction: 'Made while nobody watches', sessionName: 'made offline' });
      proxy.restore();
      await rowStatus(watched, sessions.bobPublic).filter({ hasText: 'FAILED' }).waitFor(WAIT);
      await until('the session made meanwhile on top', async () => (await rowIds(watched))[0] === fresh.sessionId);
      await textBecomes(watched, '[data-testid="total-count"]', String(before + 1));
      // Chromium itself logs a reconnect attempt the cut proxy refused; nothing else may show up.
      expect(watched.problems.filter((p) => !p.startsWith('console: WebSocket connection to'))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('streams the running turn on the session page and sends instructions from it', async () => {
    const watched = await signIn(alice);
    await watched.page.click(`[data-session-id="${sessions.aliceOne}"] a`);
    await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
    const pieces = ['The limiter ', 'lives in ', 'src/server/limits.ts ', 'and reads ', 'RATE_LIMIT_BURST.'];
    dash.openai.enqueue({ kind: 'text', chunks: pieces, delayMs: 300 });
    await watched.page.fill('#instruction', 'Where is the rate limiter?');
    await watched.page.click('form.send button[type="submit"]');
    const lastStatus = async () => (await texts(watched, '[data-testid="turn-row"] [data-testid="turn-status"]')).at(-1);
    // Part of the text is on the page while its turn is still PENDING (text read first: it only grows)...
    await until('part of the answer while the turn runs', async () => {
      const text = (await texts(watched, '[data-testid="turn-output"]'))[0] ?? '';
      return text.startsWith('The limiter ') && text.length < pieces.join('').length && (await lastStatus()) === 'PENDING';
    });
    // ...and all of it, once, when the turn has completed.
    await until('the turn to complete', async () => (await lastStatus()) === 'COMPLETED');
    await textBecomes(watched, '[data-testid="turn-output"]', pieces.join(''));
    expect(await watched.page.locator('[data-testid="turn-row"]').count()).toBe(2);
    expect(watched.problems).toEqual([]);
  });

  it('cancels a PENDING turn from its row', async () => {
    const watched = await signIn(alice);
    await watched.page.goto(`${dash.server.url}/dashboard#/sessions/${sessions.aliceTwo}`);
    await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
    dash.openai.enqueue({ kind: 'hang' });
    const { turnId } = await executeAsync(alice, { sessionId: sessions.aliceTwo, instruction: 'This will never be answered' });
    await turnRowStatus(watched, turnId).filter({ hasText: 'PENDING' }).waitFor(WAIT);
    await watched.page.click(`[data-testid="turn-row"][data-turn-id="${turnId}"] button.danger`);
    await turnRowStatus(watched, turnId).filter({ hasText: 'CANCELLED' }).waitFor(WAIT);
    expect(await turnStatus(alice, sessions.aliceTwo, turnId)).toBe('CANCELLED');
    expect(await watched.page.locator(`[data-turn-id="${turnId}"] button.danger`).count()).toBe(0);
    expect(watched.problems).toEqual([]);
  });

  it('opens the full answer of a turn, fetched with the token', async () => {
    const watched = await signIn(alice);
    await watched.page.goto(`${dash.server.url}/dashboard#/sessions/${sessions.aliceOne}`);
    const first = watched.page.locator('[data-testid="turn-row"]').first();
    await first.waitFor(WAIT);
    const href = await first.locator('a.full-link', { hasText: 'Full answer' }).getAttribute('href');
    const expected = await (await fetch(`${dash.server.url}${href}`, { headers: { authorization: `Bearer ${dash.tokenOf(alice)}` } })).text();
    expect(expected.length).toBeGreaterThan(0);
    await first.locator('a.full-link', { hasText: 'Full answer' }).click();
    await textBecomes(watched, 'dialog[open] pre', expected);
    expect(watched.problems).toEqual([]);
  });

  it('lists the files a turn wrote and its tool calls, and opens a file with the token', async () => {
    const watched = await signIn(alice);
    await watched.page.goto(`${dash.server.url}/dashboard#/sessions/${sessions.aliceTwo}`);
    await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
    const plan = '# Plan\n\n1. Measure.\n2. Fix.\n';
    dash.openai.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'docs/plan.md', content: plan }) }] },
      { kind: 'text', chunks: ['The plan is in docs/plan.md.'] },
    );
    const { turnId } = await executeAsync(alice, { sessionId: sessions.aliceTwo, instruction: 'Write the plan down' });
    await turnRowStatus(watched, turnId).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    const row = watched.page.locator(`[data-testid="turn-row"][data-turn-id="${turnId}"]`);
    // Name, origin, status and the measured time of each call.
    await until('the tool call to be listed', async () =>
      /^write_file · server · completed · \d+ ms$/.test((await texts(watched, `[data-turn-id="${turnId}"] [data-testid="turn-tool-calls"] li`))[0] ?? ''),
    );
    const file = row.locator('[data-testid="turn-files"] a.full-link');
    expect(await file.textContent()).toBe(`docs/plan.md (${Buffer.byteLength(plan)} bytes)`);
    await file.click();
    await textBecomes(watched, 'dialog[open] pre', plan);
    expect(watched.problems).toEqual([]);
  });

  it('draws the usage chart from usageByDay', async () => {
    const watched = await signIn(boss);
    await watched.page.click('nav a[data-page="usage"]');
    const chart = watched.page.locator('svg[data-testid="usage-chart"]');
    await chart.waitFor(WAIT);
    const { usageByDay } = await dash.gql<{ usageByDay: { days: { completedTurns: number; failedTurns: number; cancelledTurns: number; pendingTurns: number }[] } }>(
      boss,
      '{ usageByDay { days { completedTurns failedTurns cancelledTurns pendingTurns } } }',
    );
    const total = usageByDay.days.reduce((n, d) => n + d.completedTurns + d.failedTurns + d.cancelledTurns + d.pendingTurns, 0);
    expect(total).toBeGreaterThan(0);
    expect(await chart.locator('rect.fill-completed').count()).toBeGreaterThan(0);
    expect(await chart.locator('rect.fill-cancelled').count()).toBeGreaterThan(0);
    expect(await watched.page.textContent('.totals div:first-child dd')).toBe(String(total));
    expect(watched.problems).toEqual([]);
  });

  it('fits a phone screen without sideways scrolling', async () => {
    const watched = await signIn(alice, { width: 390, height: 844 });
    const overflow = () => watched.page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await watched.page.click('nav a[data-page="usage"]');
    await watched.page.locator('svg[data-testid="usage-chart"]').waitFor(WAIT);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await watched.page.goto(`${dash.server.url}/dashboard#/sessions/${sessions.aliceOne}`);
    await watched.page.locator('[data-testid="turn-row"]').first().waitFor(WAIT);
    expect(await overflow()).toBeLessThanOrEqual(0);
    expect(watched.problems).toEqual([]);
  });
});

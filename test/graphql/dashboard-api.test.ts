import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/caller';
import { DASHBOARD_CSP } from '../../src/server/dashboard';
import { addTurn, completeTurn } from '../support/turns';
import { alice, bob, boss, startGateway, type TestGateway } from '../support/testkit';

const USAGE = `query U($days: Int) { usageByDay(days: $days) { scope days { date pendingTurns completedTurns failedTurns cancelledTurns estimatedCostUsd } } }`;
type Usage = { usageByDay: { scope: string; days: { date: string; pendingTurns: number; completedTurns: number }[] } };

describe('dashboard queries', () => {
  let t: TestGateway;
  const tokenOf = (c: Caller) => t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });
  beforeAll(async () => {
    t = await startGateway();
  });
  afterAll(() => t.close());

  it("usageByDay: 30 days by default, the org's turns for admins and the caller's own for others", async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const session = await sessions.createSession(alice, { name: 'usage', agentContextId: 'ac', isPublic: true });
    const first = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, first.id);
    await addTurn(sessions, bob, session.id);
    const today = new Date().toISOString().slice(0, 10);

    const asBoss = await t.gql<Usage>(tokenOf(boss), USAGE);
    expect(asBoss.body.data?.usageByDay.scope).toBe('ORGANIZATION');
    expect(asBoss.body.data?.usageByDay.days).toHaveLength(30);
    expect(asBoss.body.data?.usageByDay.days.at(-1)).toMatchObject({ date: today, completedTurns: 1, pendingTurns: 1 });
    const asBob = await t.gql<Usage>(tokenOf(bob), USAGE, { days: 7 });
    expect(asBob.body.data?.usageByDay.scope).toBe('CALLER');
    expect(asBob.body.data?.usageByDay.days).toHaveLength(7);
    expect(asBob.body.data?.usageByDay.days.at(-1)).toMatchObject({ date: today, completedTurns: 0, pendingTurns: 1 });
  });

  it.each([0, 367, -5])('usageByDay refuses days = %p with BAD_USER_INPUT', async (days) => {
    const res = await t.gql(tokenOf(boss), USAGE, { days });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body.data).toBeNull();
  });

  it('latestEventId is the newest status event id, and needs a token', async () => {
    const { live } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    const before = await t.gql<{ latestEventId: string }>(tokenOf(alice), '{ latestEventId }');
    expect(before.body.data?.latestEventId).toBe(String(await live.history.latestId('acme')));
    const session = await sessions.createSession(alice, { name: 'cursor', agentContextId: 'ac' });
    await addTurn(sessions, alice, session.id);
    const after = await t.gql<{ latestEventId: string }>(tokenOf(alice), '{ latestEventId }');
    expect(Number(after.body.data?.latestEventId)).toBe(Number(before.body.data?.latestEventId) + 1);
    expect((await t.gql(null, '{ latestEventId }')).status).toBe(401);
  });
});

describe('GET /dashboard', () => {
  let t: TestGateway;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-dashboard-'));
    for (const [name, text] of Object.entries({ 'index.html': '<!doctype html><title>x</title>', 'dashboard.js': 'export {};', 'dashboard.css': 'body{}', 'icon.svg': '<svg/>', 'main.ts': 'secret' })) {
      writeFileSync(join(dir, name), text);
    }
    t = await startGateway({ hooks: { dashboardDir: dir } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page without a token, with a CSP that allows only its own files and this gateway', async () => {
    for (const path of ['/dashboard', '/dashboard/']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toBe('<!doctype html><title>x</title>');
      expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    }
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe|\*/);
    const script = await fetch(`${t.url}/dashboard/dashboard.js`);
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await fetch(`${t.url}/dashboard/icon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
  });

  it('revalidates with an ETag and serves nothing but the dashboard files', async () => {
    const first = await fetch(`${t.url}/dashboard/dashboard.css`);
    expect(first.headers.get('cache-control')).toBe('no-cache');
    const again = await fetch(`${t.url}/dashboard/dashboard.css`, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
    for (const path of ['/dashboard/main.ts', '/dashboard/constructor', '/dashboard/..%2fpackage.json', '/dashboard/x/index.html']) {
      const res = await fetch(`${t.url}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(await res.text()).not.toContain('secret');
    }
  });

  it('answers 404 with a hint when the dashboard was not built', async () => {
    const bare = await startGateway({ hooks: { dashboardDir: join(dir, 'missing') } });
    try {
      const res = await fetch(`${bare.url}/dashboard`);
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/npm run build/);
    } finally {
      await bare.close();
    }
  });
});

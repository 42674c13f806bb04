import { createServer } from 'node:net';
import { DASHBOARD_WAIT as WAIT, launchBrowser, startDashboard, type BrowserHistory, type DashboardFixture } from '../support/browser';
import { newKey, startOpenIdProvider, type OpenIdProvider } from '../support/openid-provider';
import type { ServerProcess } from '../support/server-process';
import { describeWithBrowser } from '../support/services';

// The dashboard signing in through a real OpenID Provider (oidc-provider) in Chromium:
// authorization code + PKCE as a public client, the access token never in an address (issue 41).
const AUDIENCE = 'https://gateway.test';
const TOKEN_KEY = 'agent-session-gateway.token';

const freePort = () =>
  new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });

describeWithBrowser('dashboard sign-in through an OpenID Provider, in Chromium', () => {
  let op: OpenIdProvider;
  let dash: DashboardFixture;
  let server: ServerProcess;

  beforeAll(async () => {
    const port = await freePort();
    const dashboard = `http://127.0.0.1:${port}/dashboard/`;
    op = await startOpenIdProvider({
      keys: [await newKey('dash-key')],
      clients: [
        {
          client_id: 'gateway-dashboard',
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: [dashboard],
          post_logout_redirect_uris: [dashboard],
        },
      ],
      // The dashboard renews a minute before expiry: with 75 s tokens, 15 s after signing in.
      accessTokenTtl: 75,
      accounts: { alice: { org: 'acme', orgName: 'Acme', name: 'Alice Liddell', roles: ['admin'] } },
    });
    // No JWT_SECRET: the provider's tokens are the only ones accepted. The test's browser is its own (its history is read).
    dash = await startDashboard({
      name: 'dashboard-oidc',
      browser: false,
      env: {
        PORT: String(port),
        AUTH_ISSUER: op.issuer,
        AUTH_AUDIENCE: AUDIENCE,
        DASHBOARD_OIDC_CLIENT_ID: 'gateway-dashboard',
        DASHBOARD_OIDC_SCOPE: 'openid profile api',
        DASHBOARD_OIDC_AUTHORIZE_PARAMS: `resource=${AUDIENCE}`,
      },
    });
    server = dash.server;
  }, 60_000);

  afterAll(async () => {
    await dash?.close();
    await op?.stop();
  });

  it('signs in at the provider and back, keeps the access token out of every address and the history, renews it before expiry, and signs out at the provider', async () => {
    const browser = await launchBrowser();
    const requested: string[] = [];
    let token = '';
    let renewed = '';
    let history: BrowserHistory;
    try {
      const { page, problems } = await browser.open();
      page.on('request', (request) => requested.push(request.url()));
      // What the provider's own pages log (a web font it cannot fetch offline, no favicon) is not the dashboard's: count from the return on.
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame() && frame.url().startsWith(server.url)) problems.splice(0);
      });
      await page.goto(`${server.url}/dashboard/#/usage`);
      await page.click('#provider-sign-in');
      // oidc-provider's own (development) sign-in form.
      await page.waitForURL((url) => url.href.startsWith(`${op.issuer}/interaction/`), WAIT);
      await page.fill('input[name="login"]', 'alice');
      await page.fill('input[name="password"]', 'any');
      await page.click('button[type="submit"]');
      await page.locator('.who').waitFor(WAIT);
      expect(await page.textContent('.who')).toContain('Alice Liddell');
      expect(await page.textContent('.who')).toContain('Acme');
      // Back on the page it left from; the one-time code is gone from the address.
      expect(new URL(page.url()).search).toBe('');
      expect(new URL(page.url()).hash).toBe('#/usage');
      token = String(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`));
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iss: string; aud: string; sub: string };
      expect(claims).toMatchObject({ iss: op.issuer, aud: AUDIENCE, sub: 'alice' });
      expect(await page.evaluate('Object.keys(sessionStorage).sort()')).toEqual([TOKEN_KEY]);
      expect(await page.evaluate('Object.keys(localStorage)')).toEqual([]);
      await page.locator('svg[data-testid="usage-chart"]').waitFor(WAIT);
      expect(problems).toEqual([]);

      // A minute before expiry the dashboard goes through the provider again (its session lasts: no login) and comes back where it was.
      await page.click('nav a[data-page="sessions"]');
      const stored = () => page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`);
      const deadline = Date.now() + 40_000;
      // Polled from outside: the page navigates away and back meanwhile (and its CSP forbids the eval waitForFunction needs).
      while (!renewed) {
        if (Date.now() > deadline) throw new Error('the dashboard did not renew its token');
        const now = await stored().catch(() => null);
        if (typeof now === 'string' && now !== token) renewed = now;
        else await new Promise((r) => setTimeout(r, 250));
      }
      await page.locator('.who').waitFor(WAIT);
      expect(new URL(page.url()).hash).toBe('#/sessions');
      expect(new URL(page.url()).search).toBe('');
      expect(JSON.parse(Buffer.from(renewed.split('.')[1]!, 'base64url').toString())).toMatchObject({ iss: op.issuer, sub: 'alice' });
      expect(problems).toEqual([]);

      // Signing out ends the provider's session too (its end-session page), then comes back to sign-in.
      await page.click('text=Sign out');
      await page.waitForURL((url) => url.href.startsWith(`${op.issuer}/session/end`), WAIT);
      await page.click('button[autofocus], button[name="logout"]');
      await page.locator('#provider-sign-in').waitFor(WAIT);
      expect(await page.evaluate(`sessionStorage.getItem(${JSON.stringify(TOKEN_KEY)})`)).toBeNull();
      // The provider's session is over: signing in again asks for the login again.
      await page.click('#provider-sign-in');
      await page.locator('input[name="login"]').waitFor(WAIT);
    } finally {
      history = await browser.closeAndReadHistory();
    }
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(requested.filter((url) => url.includes(token) || url.includes(renewed))).toEqual([]);
    expect(history.contains(renewed)).toBe(false);
    expect(history.urls.length).toBeGreaterThan(2);
    expect(history.contains(token)).toBe(false);
    expect(history.contains(token.split('.')[2]!)).toBe(false);
  });
});

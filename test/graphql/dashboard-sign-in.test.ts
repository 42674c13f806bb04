import { startGateway, type TestGateway } from '../support/testkit';

// How the dashboard learns to sign in (GET /dashboard/sign-in.json) and what its CSP admits (issue 41).
describe('dashboard sign-in settings', () => {
  const gateways: TestGateway[] = [];
  afterAll(() => Promise.all(gateways.map((g) => g.close())));
  const start = async (env: Record<string, string>) => {
    const t = await startGateway({ env, hooks: { sweeper: false } });
    gateways.push(t);
    return t;
  };

  it('offers pasting alone and admits no other origin without a provider', async () => {
    const t = await start({});
    const res = await fetch(`${t.url}/dashboard/sign-in.json`);
    expect(await res.json()).toEqual({ paste: true, provider: null });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self';");
  });

  it('names the provider, admits its origin for connections only, and drops pasting in production', async () => {
    const env = {
      AUTH_ISSUER: 'https://id.acme.example/realms/acme',
      AUTH_AUDIENCE: 'gateway',
      DASHBOARD_OIDC_CLIENT_ID: 'gateway-dashboard',
      DASHBOARD_OIDC_AUTHORIZE_PARAMS: 'audience=https://gateway.acme.example',
    };
    const provider = { issuer: env.AUTH_ISSUER, clientId: 'gateway-dashboard', scope: 'openid profile email', authorizeParams: { audience: 'https://gateway.acme.example' } };
    const dev = await start(env);
    const res = await fetch(`${dev.url}/dashboard/sign-in.json`);
    expect(await res.json()).toEqual({ paste: true, provider });
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("connect-src 'self' https://id.acme.example;");
    expect(csp).toContain("script-src 'self';");
    const production = await start({ ...env, NODE_ENV: 'production' });
    expect(await (await fetch(`${production.url}/dashboard/sign-in.json`)).json()).toEqual({ paste: false, provider });
  });
});

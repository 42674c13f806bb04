import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { AlgorithmRoutingVerifier } from '../../src/auth/algorithm-routing';
import { authConfig, DEFAULT_CLAIMS, type OidcConfig } from '../../src/auth/auth-config';
import { callerFromClaims, claimAt } from '../../src/auth/claims';
import { JwksTokenVerifier } from '../../src/auth/jwks.adapter';
import { SharedSecretTokenVerifier } from '../../src/auth/shared-secret.adapter';
import { ConfigError, loadConfig } from '../../src/config';
import { issueToken } from '../../src/server/auth';

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined };

describe('claim mapping', () => {
  it('reads a namespaced claim by its whole name before trying it as a path, and dotted paths into objects', () => {
    const claims = { 'https://acme.example/org': 'acme', https: { 'acme.example/org': 'not this' }, realm_access: { roles: ['a', 'b'] } };
    expect(claimAt(claims, 'https://acme.example/org')).toBe('acme');
    expect(claimAt(claims, 'realm_access.roles')).toEqual(['a', 'b']);
    expect(claimAt(claims, 'realm_access.missing.deeper')).toBeUndefined();
    expect(claimAt({ a: ['x'] }, 'a.0')).toBeUndefined();
  });

  it('takes roles from a space-separated string (scope), maps the admin role and drops a look-alike "admin"', () => {
    const mapping = { ...DEFAULT_CLAIMS, roles: 'scope', adminRole: 'gateway:admin' };
    const caller = callerFromClaims({ sub: 'u', org: 'o', scope: 'openid admin gateway:admin  read' }, mapping);
    expect(caller.roles).toEqual(['openid', 'admin', 'read']);
    expect(callerFromClaims({ sub: 'u', org: 'o', scope: 'admin' }, mapping).roles).toEqual([]);
  });

  it('names the user from name, then preferred_username, then email, then the id', () => {
    expect(callerFromClaims({ sub: 'u', org: 'o', preferred_username: 'jdoe', email: 'j@x' }, DEFAULT_CLAIMS).userName).toBe('jdoe');
    expect(callerFromClaims({ sub: 'u', org: 'o', email: 'j@x' }, DEFAULT_CLAIMS).userName).toBe('j@x');
    expect(callerFromClaims({ sub: 'u', org: 'o' }, DEFAULT_CLAIMS)).toMatchObject({ userName: 'u', orgName: 'o' });
  });

  it('refuses a token without a usable user or org, naming the claim (Entra ID: tid)', () => {
    const entra = { ...DEFAULT_CLAIMS, user: 'oid', org: 'tid' };
    expect(() => callerFromClaims({ sub: 's', oid: 'u' }, entra)).toThrow('token has no "tid" claim');
    expect(() => callerFromClaims({ tid: 't' }, entra)).toThrow('token has no "oid" claim');
    expect(() => callerFromClaims({ oid: 'u', tid: 7 }, entra)).toThrow('token claim "tid" must be a string');
    expect(() => callerFromClaims({ oid: 'u', tid: 'x'.repeat(65) }, entra)).toThrow('token claim "tid" must be at most 64 characters');
  });
});

describe('auth configuration', () => {
  it('is the shared secret alone by default', () => {
    expect(authConfig({}, false)).toEqual({ oidc: null, acceptSharedSecret: true, dashboard: null });
  });

  it('wants an audience with an issuer, asymmetric algorithms only, and an issuer for the dashboard', () => {
    expect(() => loadConfig({ AUTH_ISSUER: 'https://id.example' })).toThrow(/AUTH_AUDIENCE must be set/);
    expect(() => loadConfig({ AUTH_ISSUER: 'https://id.example', AUTH_AUDIENCE: 'api', AUTH_ALGORITHMS: 'RS256,HS256' })).toThrow(/"HS256" is not one of/);
    expect(() => loadConfig({ AUTH_JWKS_URL: 'https://id.example/jwks', AUTH_AUDIENCE: 'api', DASHBOARD_OIDC_CLIENT_ID: 'dash' })).toThrow(/needs AUTH_ISSUER/);
    expect(() => loadConfig({ NODE_ENV: 'production', AUTH_ISSUER: 'http://id.example', AUTH_AUDIENCE: 'api' })).toThrow(ConfigError);
    expect(() => loadConfig({ AUTH_AUDIENCE: 'api' })).toThrow(/needs AUTH_ISSUER or AUTH_JWKS_URL/);
  });

  it('runs in production on the provider alone; HS256 only when JWT_SECRET is set explicitly', () => {
    const oidcOnly = loadConfig({ NODE_ENV: 'production', AUTH_ISSUER: 'https://id.example/', AUTH_AUDIENCE: 'api' });
    expect(oidcOnly.auth).toMatchObject({ acceptSharedSecret: false, oidc: { issuer: 'https://id.example/', audiences: ['api'], algorithms: ['RS256', 'ES256', 'EdDSA'], clockToleranceSeconds: 30 } });
    expect(loadConfig({ AUTH_ISSUER: 'https://id.example/', AUTH_AUDIENCE: 'api', JWT_SECRET: 's'.repeat(32) }).auth.acceptSharedSecret).toBe(true);
    const dashboard = loadConfig({ AUTH_ISSUER: 'https://id.example/', AUTH_AUDIENCE: 'api', DASHBOARD_OIDC_CLIENT_ID: 'dash', DASHBOARD_OIDC_AUTHORIZE_PARAMS: 'audience=https://api' });
    expect(dashboard.auth.dashboard).toEqual({ issuer: 'https://id.example/', clientId: 'dash', scope: 'openid profile email', authorizeParams: { audience: 'https://api' } });
    expect(() => loadConfig({ AUTH_ISSUER: 'https://id.example/', AUTH_AUDIENCE: 'api', DASHBOARD_OIDC_CLIENT_ID: 'dash', DASHBOARD_OIDC_AUTHORIZE_PARAMS: 'redirect_uri=https://evil' })).toThrow(/may not set "redirect_uri"/);
  });
});

describe('which verifier a token goes to', () => {
  const provider = { verify: jest.fn(() => Promise.reject(new Error('provider asked'))) };
  const hs256 = issueToken({ userId: 'u', orgId: 'o' }, 'secret-secret-secret-secret-secret');

  it('refuses HS256 with a clear message when only the provider is trusted, and never hands it to the provider', async () => {
    const routing = new AlgorithmRoutingVerifier({ sharedSecret: null, provider });
    await expect(routing.verify(hs256, new Date())).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: expect.stringContaining('HS256 tokens are not accepted') });
    expect(provider.verify).not.toHaveBeenCalled();
  });

  it('sends HS256 to the shared secret and refuses other algorithms without a provider', async () => {
    const routing = new AlgorithmRoutingVerifier({ sharedSecret: new SharedSecretTokenVerifier('secret-secret-secret-secret-secret'), provider: null });
    expect((await routing.verify(hs256, new Date())).caller.userId).toBe('u');
    const { privateKey } = await generateKeyPair('ES256');
    const es256 = await new SignJWT({ sub: 'u', org: 'o' }).setProtectedHeader({ alg: 'ES256' }).setExpirationTime('1m').sign(privateKey);
    await expect(routing.verify(es256, new Date())).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'invalid token' });
  });
});

describe('the JWKS adapter', () => {
  let server: Server;
  let fetches = 0;
  let privateKey: KeyLike;
  let config: OidcConfig;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] });
    server = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    config = {
      ...authConfig({ AUTH_JWKS_URL: `http://127.0.0.1:${port}/jwks`, AUTH_AUDIENCE: 'api', AUTH_JWKS_COOLDOWN_SECONDS: '30' }, false).oidc!,
    };
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const sign = (kid: string) => new SignJWT({ sub: 'u', org: 'o' }).setProtectedHeader({ alg: 'ES256', kid }).setAudience('api').setExpirationTime('5m').sign(privateKey);

  it('fetches the key set once for a flood of made-up kids (at most one fetch per cooldown)', async () => {
    const verifier = new JwksTokenVerifier(config, silent);
    expect((await verifier.verify(await sign('k1'), new Date())).caller.userId).toBe('u');
    const before = fetches;
    const made_up = await Promise.all(Array.from({ length: 20 }, (_, i) => sign(`made-up-${i}`)));
    for (const token of made_up) {
      await expect(verifier.verify(token, new Date())).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'token not signed by a key of the identity provider' });
    }
    expect(fetches - before).toBeLessThanOrEqual(1);
  });

  it('keeps a verified token for reuse no longer than the key cache window', async () => {
    const verifier = new JwksTokenVerifier({ ...config, jwksCacheSeconds: 60 }, silent);
    const now = new Date();
    const verified = await verifier.verify(await sign('k1'), now);
    expect(verified.reuseUntil.getTime()).toBe(now.getTime() + 60_000);
    expect(verified.expiresAt.getTime()).toBeGreaterThan(verified.reuseUntil.getTime());
  });
});

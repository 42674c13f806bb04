import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { newKey, signWith, startOpenIdProvider, type OpenIdProvider, type ProviderKey } from '../support/openid-provider';
import { eventsOf, rawStream, sseClient } from '../support/sse';
import { startGateway, type TestGateway } from '../support/testkit';
import { sleep, subscribe, waitUntil, wsClient } from '../support/ws';

// Tokens of a real OpenID Provider (oidc-provider, in a child process) across HTTP, WebSocket
// and SSE, with the claim mapping of a namespaced org claim and Keycloak-style roles (issue 41).
const AUDIENCE = 'https://gateway.test';
const ORG_CLAIM = 'https://acme.example/org';
const ME = '{ me { user { id text } organization { id text } roles } }';
const secretOf = (clientId: string) => `secret-of-${clientId}-long-enough-for-the-provider`;
const client = (clientId: string, claims: Record<string, unknown>) => ({
  client_id: clientId,
  client_secret: secretOf(clientId),
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  test_claims: claims,
});
const CLIENTS = [
  client('svc-alice', { [ORG_CLAIM]: 'acme', realm_access: { roles: ['gw-admin', 'offline_access'] }, name: 'Alice A.' }),
  client('svc-bob', { [ORG_CLAIM]: 'acme', realm_access: { roles: ['admin'] } }),
  client('svc-no-org', { realm_access: { roles: [] } }),
  client('svc-bad-org', { [ORG_CLAIM]: 'acme\n' }),
];
const ENV = {
  AUTH_AUDIENCE: AUDIENCE,
  AUTH_CLAIM_ORG: ORG_CLAIM,
  AUTH_CLAIM_ROLES: 'realm_access.roles',
  AUTH_ADMIN_ROLE: 'gw-admin',
  AUTH_JWKS_CACHE_SECONDS: '2',
  AUTH_JWKS_COOLDOWN_SECONDS: '0',
  AUTH_CLOCK_TOLERANCE_SECONDS: '0',
};

interface Me {
  me: { user: { id: string; text: string }; organization: { id: string; text: string }; roles: string[] };
}

describe('tokens of an OpenID Provider (oidc-provider)', () => {
  let op: OpenIdProvider;
  let other: OpenIdProvider;
  let t: TestGateway;
  let first: ProviderKey;

  const http = async (token: string) => {
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: ME }),
    });
    return { status: res.status, body: (await res.json()) as { data?: Me; errors?: { message: string; extensions: { code: string } }[] } };
  };
  const aliceToken = () => op.clientToken('svc-alice', secretOf('svc-alice'), AUDIENCE);
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    first = await newKey('first');
    op = await startOpenIdProvider({ keys: [first], clients: CLIENTS });
    other = await startOpenIdProvider({ keys: [await newKey('other')], clients: CLIENTS });
    t = await startGateway({ env: { ...ENV, AUTH_ISSUER: op.issuer }, hooks: { sweeper: false } });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await op?.stop();
    await other?.stop();
  });

  it('maps a namespaced org claim and Keycloak roles over HTTP: the provider role gw-admin is admin, its "admin" is not', async () => {
    const alice = await http(await aliceToken());
    expect(alice).toEqual({ status: 200, body: { data: { me: { user: { id: 'svc-alice', text: 'Alice A.' }, organization: { id: 'acme', text: 'acme' }, roles: ['admin', 'offline_access'] } } } });
    const bob = await http(await op.clientToken('svc-bob', secretOf('svc-bob'), AUDIENCE));
    expect(bob.body.data?.me).toMatchObject({ user: { id: 'svc-bob' }, roles: [] });
  });

  it('accepts the same tokens over WebSocket and SSE', async () => {
    const token = await aliceToken();
    const ws = wsClient(t.url, token);
    try {
      const overWs = subscribe<Me>(ws, ME);
      await overWs.done;
      expect(overWs.data[0]?.me.user.id).toBe('svc-alice');
    } finally {
      await ws.dispose();
    }
    const sse = await rawStream(t.url, { token, body: { query: ME } });
    expect(sse.status).toBe(200);
    expect(eventsOf(sse.text)[0]).toMatchObject({ event: 'next', data: { data: { me: { user: { id: 'svc-alice' }, roles: ['admin', 'offline_access'] } } } });
  });

  it('refuses a token without the org claim, naming it, and one whose org breaks the id rule', async () => {
    const noOrg = await http(await op.clientToken('svc-no-org', secretOf('svc-no-org'), AUDIENCE));
    expect(noOrg.status).toBe(401);
    expect(noOrg.body.errors?.[0]).toMatchObject({ message: `token has no "${ORG_CLAIM}" claim`, extensions: { code: 'UNAUTHENTICATED' } });
    const badOrg = await http(await op.clientToken('svc-bad-org', secretOf('svc-bad-org'), AUDIENCE));
    expect(badOrg.status).toBe(401);
    expect(badOrg.body.errors?.[0]?.message).toBe(`token claim "${ORG_CLAIM}" must not contain control characters`);
  });

  it('refuses with 401 over HTTP, WebSocket and SSE: wrong issuer, wrong audience, expired, not yet valid, alg none, HS256 keyed with the public key, another provider', async () => {
    const claims = { sub: 'mallory', [ORG_CLAIM]: 'acme', aud: AUDIENCE, iss: op.issuer, iat: now(), exp: now() + 300 };
    const publicPem = Buffer.from(JSON.stringify(first.publicJwk));
    const unsigned = (payload: object, header: object) => `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    const hs256WithPublicKey = (() => {
      const body = unsigned(claims, { alg: 'HS256', typ: 'JWT', kid: first.kid });
      return `${body}.${createHmac('sha256', publicPem).update(body).digest('base64url')}`;
    })();
    const refused: [string, string, string][] = [
      ['wrong issuer', await signWith(first, { ...claims, iss: 'https://evil.example' }), 'token refused: unexpected "iss" claim value'],
      ['wrong audience', await op.clientToken('svc-alice', secretOf('svc-alice'), 'https://other.test'), 'token refused: unexpected "aud" claim value'],
      ['expired', await signWith(first, { ...claims, iat: now() - 600, exp: now() - 60 }), 'token expired'],
      ['not yet valid', await signWith(first, { ...claims, nbf: now() + 120 }), 'token not valid yet ("nbf")'],
      ['alg none', `${unsigned(claims, { alg: 'none' })}.`, 'invalid token'],
      ['HS256 with the public key as secret', hs256WithPublicKey, 'invalid token'],
      ['another provider', await other.clientToken('svc-alice', secretOf('svc-alice'), AUDIENCE), 'token not signed by a key of the identity provider'],
    ];
    for (const [what, token, message] of refused) {
      const res = await http(token);
      expect([what, res.status, res.body.errors?.[0]?.extensions.code, res.body.errors?.[0]?.message]).toEqual([what, 401, 'UNAUTHENTICATED', message]);
      const sse = await rawStream(t.url, { token, body: { query: ME } });
      expect([what, sse.status]).toEqual([what, 401]);
      let closedWith = 0;
      const ws = wsClient(t.url, token, { onClosed: (code) => (closedWith = code) });
      await subscribe(ws, ME).done.catch(() => undefined);
      expect([what, closedWith]).toEqual([what, 4403]);
      await ws.dispose();
    }
  });

  it('ends a WebSocket and an event stream when the provider token expires', async () => {
    const token = await signWith(first, { sub: 'short-lived', [ORG_CLAIM]: 'acme', aud: AUDIENCE, iss: op.issuer, iat: now(), exp: now() + 2 });
    let closedWith = 0;
    const ws = wsClient(t.url, token, { onClosed: (code) => (closedWith = code) });
    const overWs = subscribe(ws, 'subscription { sessionActivity { eventId } }');
    const sse = sseClient(t.url, token);
    const overSse = subscribe(sse, 'subscription { sessionActivity { eventId } }');
    await waitUntil(() => closedWith === 4403, 8_000, 'the WebSocket to close with 4403');
    await expect(overWs.done).rejects.toBeDefined();
    await expect(overSse.done).rejects.toBeDefined();
    await ws.dispose();
    sse.dispose();
  });

  it('takes a new key without a restart, and refuses the retired one once the key cache window passes', async () => {
    const old = await aliceToken();
    expect((await http(old)).status).toBe(200);
    const next = await newKey('next', 'ES256');
    // Rollover: the new key signs, the old one is still published.
    await op.setKeys([next, first]);
    const signedByNext = await signWith(next, { sub: 'svc-carol', [ORG_CLAIM]: 'acme', aud: AUDIENCE, iss: op.issuer, iat: now(), exp: now() + 300 });
    expect((await http(signedByNext)).body.data?.me.user.id).toBe('svc-carol');
    expect((await http(old)).status).toBe(200);
    // The old key is retired: within AUTH_JWKS_CACHE_SECONDS (2) its tokens stop working.
    await op.setKeys([next]);
    await sleep(2_500);
    const refused = await http(old);
    expect([refused.status, refused.body.errors?.[0]?.message]).toEqual([401, 'token not signed by a key of the identity provider']);
    expect((await http(signedByNext)).status).toBe(200);
    await op.setKeys([first]);
  });

  it('answers 503 (WebSocket: 1013, retried by clients), and keeps serving, when the provider cannot be reached; HS256 service tokens still work', async () => {
    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    const away = await startGateway({ env: { ...ENV, AUTH_ISSUER: `http://127.0.0.1:${port}` }, hooks: { sweeper: false } });
    try {
      const token = await aliceToken();
      const res = await fetch(`${away.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query: ME }) });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('SERVICE_UNAVAILABLE');
      expect((await rawStream(away.url, { token, body: { query: ME } })).status).toBe(503);
      let closedWith = 0;
      const ws = wsClient(away.url, token, { onClosed: (code) => (closedWith = code) });
      await subscribe(ws, ME).done.catch(() => undefined);
      await ws.dispose();
      expect(closedWith).toBe(1013);
      expect((await fetch(`${away.url}/healthz`)).status).toBe(200);
      // JWT_SECRET is set for this gateway (testkit): service-to-service HS256 tokens still pass.
      expect((await away.gql(away.token({ userId: 'svc-batch' }), ME)).body.data).toMatchObject({ me: { user: { id: 'svc-batch' } } });
    } finally {
      await away.close();
    }
  });
});

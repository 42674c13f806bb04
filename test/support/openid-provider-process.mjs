// A real OpenID Provider for the tests (issue 41): `oidc-provider`, certified, in a child
// process of its own (it is an ES module; jest loads CommonJS). Nothing reaches the internet.
//
// Environment: PORT (0 = a free one), ACCESS_TOKEN_TTL (seconds, default 300), CLIENTS (JSON client metadata), ACCOUNTS (JSON: account
// id -> extra access-token claims), KEYS (JSON: the private JWKs to sign with; the first of an
// algorithm signs). Prints `ready <issuer>` on stdout once it listens.
// POST /__test/keys {"keys": [...]} swaps the key set (rotation) without restarting, as a
// provider's key rollover does: new tokens are signed with the new first key at once.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const accounts = JSON.parse(process.env.ACCOUNTS ?? '{}');
const clients = JSON.parse(process.env.CLIENTS ?? '[]');
let keys = JSON.parse(process.env.KEYS ?? '[]');

const server = createServer();
await new Promise((done) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', done));
const issuer = `http://127.0.0.1:${server.address().port}`;

function build() {
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys },
    extraClientMetadata: { properties: ['test_claims'] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, name: `Name of ${id}`, email: `${id}@example.test` }) }),
    claims: { openid: ['sub'], profile: ['name'], email: ['email'] },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({ scope: 'api', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: Number(process.env.ACCESS_TOKEN_TTL ?? 300) }),
      },
    },
    // Claims of the tenant and roles, as an Auth0 action or Keycloak mapper would add them.
    extraTokenClaims: (_ctx, token) => (token.accountId ? accounts[token.accountId] : token.client?.metadata().test_claims) ?? {},
    // A first-party dashboard: no consent screen.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid profile email');
      for (const resource of [].concat(ctx.oidc.params.resource ?? [])) grant.addResourceScope(resource, 'api');
      await grant.save();
      return grant;
    },
    pkce: { required: () => true },
    ttl: { Session: 3600, Interaction: 600, Grant: 3600, AuthorizationCode: 60, IdToken: 300 },
  });
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err));
  return provider.callback();
}

let handler = build();
server.on('request', (req, res) => {
  if (req.method === 'POST' && req.url === '/__test/keys') {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      keys = JSON.parse(body).keys;
      handler = build();
      res.writeHead(204).end();
    });
    return;
  }
  handler(req, res);
});
console.log(`ready ${issuer}`);

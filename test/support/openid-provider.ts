import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';

/** A private signing key of the test provider, and what the gateway's tests need to forge tokens with it. */
export interface ProviderKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  /** The private JWK, as the provider holds it. */
  readonly jwk: JWK;
  /** The public JWK, as the provider publishes it. */
  readonly publicJwk: JWK;
}

export async function newKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<ProviderKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, jwk, publicJwk };
}

/** Signs `claims` with `key` as the provider would (for the tokens a provider never issues: expired, not yet valid, wrong issuer). */
export async function signWith(key: ProviderKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' }).sign(await importJWK(key.jwk, key.alg));
}

export interface OpenIdProvider {
  readonly issuer: string;
  /** Replaces the provider's key set (a rotation); the first key of an algorithm signs from now on. */
  setKeys(keys: readonly ProviderKey[]): Promise<void>;
  /** An access token for `resource` by the client-credentials grant (its claims come from the client's `test_claims`). */
  clientToken(clientId: string, secret: string, resource: string): Promise<string>;
  stop(): Promise<void>;
}

export interface ProviderOptions {
  readonly keys: readonly ProviderKey[];
  readonly clients: readonly Record<string, unknown>[];
  /** Account id -> extra claims of its access tokens. */
  readonly accounts?: Readonly<Record<string, Record<string, unknown>>>;
  readonly port?: number;
  /** Lifetime of the access tokens it issues, in seconds (default 300). */
  readonly accessTokenTtl?: number;
}

/** Starts `oidc-provider` (test/support/openid-provider-process.mjs) in a child process on 127.0.0.1. */
export function startOpenIdProvider(options: ProviderOptions): Promise<OpenIdProvider> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'openid-provider-process.mjs')], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      PORT: String(options.port ?? 0),
      KEYS: JSON.stringify(options.keys.map((k) => k.jwk)),
      CLIENTS: JSON.stringify(options.clients),
      ACCOUNTS: JSON.stringify(options.accounts ?? {}),
      ACCESS_TOKEN_TTL: String(options.accessTokenTtl ?? 300),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its start-up warnings (in-memory adapter, dev interactions) are what a test provider is; errors still show.
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!line.startsWith('oidc-provider WARNING')) console.error(line);
  });
  return new Promise((ready, reject) => {
    const timer = setTimeout(() => reject(new Error('the OpenID Provider did not start in time')), 20_000);
    child.once('exit', (code) => reject(new Error(`the OpenID Provider exited early with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^ready (\S+)$/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      const issuer = match[1]!;
      ready({
        issuer,
        async setKeys(keys) {
          const res = await fetch(`${issuer}/__test/keys`, { method: 'POST', body: JSON.stringify({ keys: keys.map((k) => k.jwk) }) });
          if (res.status !== 204) throw new Error(`rotating keys: ${res.status}`);
        },
        async clientToken(clientId, secret, resource) {
          const res = await fetch(`${issuer}/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
            body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'api' }),
          });
          const body = (await res.json()) as { access_token?: string };
          if (!body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
          return body.access_token;
        },
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

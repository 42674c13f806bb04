import { ConfigError } from '../config-error';

/** How claims of a provider's token become a caller (defaults: the gateway's own token shape). */
export interface ClaimMapping {
  /** AUTH_CLAIM_USER: the user id (default `sub`). */
  readonly user: string;
  /** AUTH_CLAIM_ORG: the org id (default `org`); a dotted path or a namespaced claim URL. */
  readonly org: string;
  /** AUTH_CLAIM_ORG_NAME: the org's display name (default `orgName`; the org id when absent). */
  readonly orgName: string;
  /** AUTH_CLAIM_NAME: the user's display name (default `name`, then `preferred_username`, `email`, the id). */
  readonly name: string;
  /** AUTH_CLAIM_ROLES: an array or a space-separated string (default `roles`). */
  readonly roles: string;
  /** AUTH_ADMIN_ROLE: the provider's role that makes an org administrator (default `admin`). */
  readonly adminRole: string;
}

export const DEFAULT_CLAIMS: ClaimMapping = { user: 'sub', org: 'org', orgName: 'orgName', name: 'name', roles: 'roles', adminRole: 'admin' };

/** Asymmetric algorithms only: an HMAC algorithm here would let a public key serve as a secret. */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** Tokens of an OpenID Provider (or any issuer publishing a JWKS). */
export interface OidcConfig {
  /** AUTH_ISSUER: `iss` must equal it; the JWKS is discovered from it unless AUTH_JWKS_URL is set. */
  readonly issuer: string | null;
  /** AUTH_JWKS_URL: the key set itself (no discovery). */
  readonly jwksUrl: string | null;
  /** AUTH_AUDIENCE: `aud` must contain one of these. */
  readonly audiences: readonly string[];
  readonly algorithms: readonly AsymmetricAlgorithm[];
  readonly clockToleranceSeconds: number;
  /** Keys are fetched again after this long, so a retired key stops working within it. */
  readonly jwksCacheSeconds: number;
  /** At most one fetch per this long for unknown `kid`s, so made-up ones cannot hammer the provider. */
  readonly jwksCooldownSeconds: number;
  readonly jwksTimeoutMs: number;
  readonly claims: ClaimMapping;
}

/** Dashboard sign-in through the provider: authorization code + PKCE, as a public client. */
export interface DashboardSignInConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly scope: string;
  /** Extra authorization request parameters (`audience` for Auth0, `resource` for RFC 8707 providers). */
  readonly authorizeParams: Readonly<Record<string, string>>;
}

export interface AuthConfig {
  /** Null: only HS256 tokens (JWT_SECRET or the development secret). */
  readonly oidc: OidcConfig | null;
  /** HS256 tokens are accepted: always without a provider, with one only when JWT_SECRET is set. */
  readonly acceptSharedSecret: boolean;
  readonly dashboard: DashboardSignInConfig | null;
}

type Env = Readonly<Record<string, string | undefined>>;

export function authConfig(env: Env, isProduction: boolean): AuthConfig {
  const issuer = httpUrl(env, 'AUTH_ISSUER', isProduction);
  const jwksUrl = httpUrl(env, 'AUTH_JWKS_URL', isProduction);
  const audiences = list(env.AUTH_AUDIENCE);
  const oidc = issuer || jwksUrl ? oidcConfig(env, issuer, jwksUrl, audiences) : null;
  if (!oidc && audiences.length > 0) throw new ConfigError('AUTH_AUDIENCE needs AUTH_ISSUER or AUTH_JWKS_URL');
  const clientId = env.DASHBOARD_OIDC_CLIENT_ID?.trim() || null;
  if (clientId && !issuer) throw new ConfigError('DASHBOARD_OIDC_CLIENT_ID needs AUTH_ISSUER (the dashboard discovers the provider from it)');
  return {
    oidc,
    acceptSharedSecret: oidc === null || Boolean(env.JWT_SECRET),
    dashboard:
      clientId && issuer
        ? { issuer, clientId, scope: env.DASHBOARD_OIDC_SCOPE?.trim() || 'openid profile email', authorizeParams: params(env.DASHBOARD_OIDC_AUTHORIZE_PARAMS) }
        : null,
  };
}

function oidcConfig(env: Env, issuer: string | null, jwksUrl: string | null, audiences: readonly string[]): OidcConfig {
  if (audiences.length === 0) throw new ConfigError('AUTH_AUDIENCE must be set with AUTH_ISSUER or AUTH_JWKS_URL (the audience the provider puts in tokens for this gateway)');
  return {
    issuer,
    jwksUrl,
    audiences,
    algorithms: algorithms(env.AUTH_ALGORITHMS),
    clockToleranceSeconds: int(env, 'AUTH_CLOCK_TOLERANCE_SECONDS', 30, 0, 300),
    jwksCacheSeconds: int(env, 'AUTH_JWKS_CACHE_SECONDS', 600, 1, 86_400),
    jwksCooldownSeconds: int(env, 'AUTH_JWKS_COOLDOWN_SECONDS', 30, 0, 3_600),
    jwksTimeoutMs: int(env, 'AUTH_JWKS_TIMEOUT_MS', 5_000, 100, 60_000),
    claims: {
      user: claim(env, 'AUTH_CLAIM_USER', DEFAULT_CLAIMS.user),
      org: claim(env, 'AUTH_CLAIM_ORG', DEFAULT_CLAIMS.org),
      orgName: claim(env, 'AUTH_CLAIM_ORG_NAME', DEFAULT_CLAIMS.orgName),
      name: claim(env, 'AUTH_CLAIM_NAME', DEFAULT_CLAIMS.name),
      roles: claim(env, 'AUTH_CLAIM_ROLES', DEFAULT_CLAIMS.roles),
      adminRole: claim(env, 'AUTH_ADMIN_ROLE', DEFAULT_CLAIMS.adminRole),
    },
  };
}

function algorithms(raw: string | undefined): AsymmetricAlgorithm[] {
  const names = list(raw);
  if (names.length === 0) return ['RS256', 'ES256', 'EdDSA'];
  for (const name of names) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(name)) {
      throw new ConfigError(`AUTH_ALGORITHMS: "${name}" is not one of ${ASYMMETRIC_ALGORITHMS.join(', ')} (HS256 tokens use JWT_SECRET)`);
    }
  }
  return names as AsymmetricAlgorithm[];
}

/** An issuer in production must be https: its keys decide who anybody is. */
function httpUrl(env: Env, name: string, isProduction: boolean): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  if (isProduction && !raw.startsWith('https:')) throw new ConfigError(`${name} must be an https URL when NODE_ENV=production`);
  return raw;
}

function claim(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw.length > 200) throw new ConfigError(`${name} must be at most 200 characters`);
  return raw;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function params(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw?.trim() ?? '')) {
    if (['client_id', 'redirect_uri', 'response_type', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'scope'].includes(key)) {
      throw new ConfigError(`DASHBOARD_OIDC_AUTHORIZE_PARAMS may not set "${key}" (the dashboard sets it)`);
    }
    out[key] = value;
  }
  return out;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  return value;
}

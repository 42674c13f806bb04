/**
 * The bearer token in the browser: taken from the URL fragment (`#token=<jwt>`, which the
 * browser never sends to a server) or pasted in, kept in sessionStorage for this tab only.
 * Its claims are read here only to greet the user and to notice expiry early; the gateway
 * checks the signature and is the judge of validity.
 */
export const TOKEN_KEY = 'agent-session-gateway.token';

/** The token in a `#token=...` fragment (other fragment parameters are ignored), or null. */
export function tokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const token = params.get('token')?.trim();
  return token ? token : null;
}

export interface TokenClaims {
  readonly userId: string | null;
  /** Seconds since the epoch, or null when the token has no (readable) `exp`. */
  readonly expiresAt: number | null;
}

/** Reads a JWT's payload without verifying it; null when it is not a JWT at all. */
export function readClaims(token: string): TokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='))) as { sub?: unknown; exp?: unknown };
    return {
      userId: typeof json.sub === 'string' ? json.sub : null,
      expiresAt: typeof json.exp === 'number' ? json.exp : null,
    };
  } catch {
    return null;
  }
}

/** Why a token cannot be used as it is, or null when it looks usable (the gateway decides). */
export function tokenProblem(token: string, nowMs: number): string | null {
  const claims = readClaims(token);
  if (!claims) return 'That is not a token: paste the whole JWT (three parts separated by dots).';
  if (claims.expiresAt !== null && claims.expiresAt * 1000 <= nowMs) {
    return `This token expired at ${new Date(claims.expiresAt * 1000).toLocaleString()}. Get a new one with npm run token.`;
  }
  return null;
}

/**
 * The bearer token in the browser: pasted into the sign-in form and kept in sessionStorage,
 * for this tab only. It never goes in an address: a browser keeps every address it visits in
 * its history (on disk, whatever the page does afterwards with replaceState), so a token
 * found in one (`#token=<jwt>`, as older instructions said) is taken out and never used.
 * Its claims are read here only to greet the user and to notice expiry early; the gateway
 * checks the signature and is the judge of validity.
 */
export const TOKEN_KEY = 'agent-session-gateway.token';

/** True when a URL fragment carries a `token=` parameter (other parameters are ignored). */
export function hasTokenInFragment(hash: string): boolean {
  return new URLSearchParams(hash.replace(/^#/, '')).has('token');
}

export const TOKEN_IN_ADDRESS =
  'A token in the address is not used: the browser keeps every address in its history. Paste it here instead, and get a new one if that link was shared.';

export interface TokenClaims {
  readonly userId: string | null;
  /** `iss`, when the token names its issuer. */
  readonly issuer: string | null;
  /** Seconds since the epoch, or null when the token has no (readable) `exp`. */
  readonly expiresAt: number | null;
}

/** Reads a JWT's payload without verifying it; null when it is not a JWT at all. */
export function readClaims(token: string): TokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const json = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='))) as { sub?: unknown; exp?: unknown; iss?: unknown };
    return {
      userId: typeof json.sub === 'string' ? json.sub : null,
      issuer: typeof json.iss === 'string' ? json.iss : null,
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

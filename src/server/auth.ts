import jwt from 'jsonwebtoken';
import type { TokenVerifier } from '../auth/token-verifier.port';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';

export interface Authenticated {
  readonly caller: Caller;
  /** When the token stops being valid; long-lived sockets close then. */
  readonly expiresAt: Date;
}

const unauthenticated = (message: string) => new DomainError('UNAUTHENTICATED', message);

/**
 * Parses an `Authorization: Bearer <jwt>` value into the caller it names, with the verifier
 * the composition root chose (shared secret, identity provider, or both). Refusals are
 * UNAUTHENTICATED (401); SERVICE_UNAVAILABLE (503) when the provider's keys cannot be fetched.
 */
export async function authenticate(authorization: string | undefined | null, verifier: TokenVerifier, now = new Date()): Promise<Authenticated> {
  if (!authorization) throw unauthenticated('missing bearer token');
  const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token) throw unauthenticated('the Authorization header must be "Bearer <token>"');
  const known = verified.get(token);
  if (known?.verifier === verifier && now.getTime() < known.reuseUntil) return known.authenticated;
  const { caller, expiresAt, reuseUntil } = await verifier.verify(token, now);
  const authenticated: Authenticated = Object.freeze({ caller, expiresAt });
  remember(token, { verifier, reuseUntil: reuseUntil.getTime(), authenticated });
  return authenticated;
}

/**
 * Tokens that verified, by their text: a client sends the same token with every request,
 * and checking its signature and claims again showed in a list request's CPU profile
 * (docs/performance.md). Only
 * successes are kept (a refused token is checked every time), each until its `exp` (sooner
 * for a provider's token: until its keys are fetched again); the oldest entry goes when the
 * cache is full, so a flood of distinct tokens costs a bounded amount of memory and merely misses.
 */
interface VerifiedEntry {
  readonly verifier: TokenVerifier;
  /** Milliseconds since the epoch. */
  readonly reuseUntil: number;
  readonly authenticated: Authenticated;
}

const VERIFIED_TOKENS = 1_000;
const verified = new Map<string, VerifiedEntry>();

function remember(token: string, entry: VerifiedEntry): void {
  verified.delete(token);
  if (verified.size >= VERIFIED_TOKENS) verified.delete(verified.keys().next().value as string);
  verified.set(token, entry);
}

export interface TokenClaims {
  readonly userId: string;
  readonly userName?: string;
  readonly orgId: string;
  readonly orgName?: string;
  readonly roles?: readonly string[];
}

/** Issues an HS256 token in the gateway's own shape (local use, service-to-service and tests). */
export function issueToken(claims: TokenClaims, secret: string, ttlSeconds = 12 * 3600): string {
  return jwt.sign(
    {
      name: claims.userName ?? claims.userId,
      org: claims.orgId,
      orgName: claims.orgName ?? claims.orgId,
      roles: [...(claims.roles ?? [])],
    },
    secret,
    { algorithm: 'HS256', subject: claims.userId, expiresIn: ttlSeconds },
  );
}

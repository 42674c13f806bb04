import type { Caller } from '../domain/caller';

/** A token whose signature and claims checked out, and the caller it names. */
export interface VerifiedToken {
  readonly caller: Caller;
  /** When the token stops being valid; live connections close then. */
  readonly expiresAt: Date;
  /**
   * Until when the same token may be taken as verified without checking it again: its expiry,
   * or sooner when the key that signed it may be retired (the JWKS cache window).
   */
  readonly reuseUntil: Date;
}

/**
 * Checks a bearer token (the JWT itself, without "Bearer "). Refusals are DomainErrors:
 * UNAUTHENTICATED for a token that is not good, SERVICE_UNAVAILABLE when the keys to judge
 * it cannot be fetched right now. The composition root picks the adapters from config.
 */
export interface TokenVerifier {
  verify(token: string, now: Date): Promise<VerifiedToken>;
}

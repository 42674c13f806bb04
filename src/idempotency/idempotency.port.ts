/** Keys belong to one caller: the same key from another user or org is another key. */
export interface IdempotencyScope {
  readonly orgId: string;
  readonly userId: string;
}

export type IdempotencyClaim =
  /** This call owns the key and must run, then finish or release it. */
  | { readonly kind: 'claimed' }
  /** A first call with the same input finished; its outcome is to be returned as is. */
  | { readonly kind: 'done'; readonly outcome: string }
  /** A first call with the same input is still running. */
  | { readonly kind: 'running' };

/**
 * Port: the stored idempotency keys of execute (issue 3 point 9). Adapter: the
 * idempotency_keys table (idempotency-keys.ts). Errors: IDEMPOTENCY_KEY_REUSED (a
 * DomainError) for a key claimed with another input; StoreUnavailableError (an
 * UnavailableError of the 'session store') when the database cannot be reached.
 */
export interface IdempotencyKeyStore {
  /**
   * Claims `key` for `inputHash`. A key past its expiry (its first call died, or its
   * retention ended) is taken over.
   */
  claim(scope: IdempotencyScope, key: string, inputHash: string, runningUntil: Date): Promise<IdempotencyClaim>;
  /** Records the outcome every retry with the same input receives until `keepUntil`. */
  finish(
    scope: IdempotencyScope,
    key: string,
    outcome: string,
    turn: { readonly sessionId: string; readonly turnId: string } | null,
    keepUntil: Date,
  ): Promise<void>;
  /** The first call changed nothing (bad input, busy session, ...): a retry may run afresh. */
  release(scope: IdempotencyScope, key: string): Promise<void>;
  /** Forgets keys past their retention (and RUNNING keys whose call died); returns how many. */
  purgeExpired(): Promise<number>;
}

import type { Caller } from '../domain/caller';

/** What one admitted execute holds until its provider round ends. */
export interface BudgetHold {
  /** Gives the in-flight slot back. Idempotent; never throws. */
  release: () => void;
}

/**
 * Per-user and per-org budgets for what costs money: executes per minute and turns in
 * flight (a provider round running for the user's turn). The request handler asks before
 * anything is recorded; a refusal is RATE_LIMITED with `retryAfterSeconds`.
 */
export interface ExecuteBudget {
  /**
   * Admits one provider round of `caller`: holds an in-flight slot and, for a new execute
   * (not a tool-results continuation of a turn already admitted), charges the per-minute
   * budgets of the user and the org. Throws RATE_LIMITED and holds nothing when over budget.
   */
  admit(caller: Caller, round: { readonly newExecute: boolean }): Promise<BudgetHold>;
  /** Releases what this instance still holds and closes its connections (shutdown). */
  close(): Promise<void>;
}

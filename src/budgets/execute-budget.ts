import { randomUUID } from 'node:crypto';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Caller } from '../domain/caller';
import { DomainError } from '../domain/errors';
import type { Logger } from '../logger';
import type { BudgetHold, ExecuteBudget } from './execute-budget.port';
import type { SlotLedger } from './slot-ledger';

/** RATE_LIMIT_* and MAX_TURNS_IN_FLIGHT_PER_USER; 0 means no limit. */
export interface BudgetLimits {
  readonly executesPerMinute: number;
  readonly orgExecutesPerMinute: number;
  readonly turnsInFlightPerUser: number;
}

/** Where the counts live: memory (one instance) or Redis (shared), chosen by the composition root. */
export interface BudgetStores {
  /** Executes per minute per user; null when unlimited. */
  readonly userExecutes: RateLimiterAbstract | null;
  /** Executes per minute per org; null when unlimited. */
  readonly orgExecutes: RateLimiterAbstract | null;
  readonly slots: SlotLedger;
  /** Closes what the stores opened (a Redis connection). */
  readonly close?: () => Promise<void>;
}

/** A turn slot is refused until one of the user's rounds ends: typically seconds. */
const IN_FLIGHT_RETRY_SECONDS = 1;

/**
 * The budget rules, whatever stores hold the counts. An in-flight slot is taken first (it
 * is given back if the per-minute budgets refuse), and the user's per-minute budget is
 * charged before the org's, so one user's flood is stopped by their own budget without
 * spending the org's; a refusal by the org's budget refunds the user's point.
 */
export class LimitedExecuteBudget implements ExecuteBudget {
  private readonly held = new Map<string, { readonly key: string; readonly slotId: string }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly deps: {
      readonly limits: BudgetLimits;
      readonly stores: BudgetStores;
      /** A slot not renewed for this long lapses (its instance died); renewed every third of it. */
      readonly slotTtlMs: number;
      readonly logger: Logger;
    },
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(deps.slotTtlMs / 3)));
    this.timer.unref();
  }

  async admit(caller: Caller, round: { readonly newExecute: boolean }): Promise<BudgetHold> {
    const key = JSON.stringify([caller.orgId, caller.userId]);
    const max = this.deps.limits.turnsInFlightPerUser;
    const slotId = randomUUID();
    if (max > 0) {
      if (!(await this.deps.stores.slots.hold(key, slotId, max, this.deps.slotTtlMs))) {
        throw rateLimited(`at most ${max} turns may run at once per user; wait for one to finish`, IN_FLIGHT_RETRY_SECONDS, 'turnsInFlight');
      }
      this.held.set(slotId, { key, slotId });
    }
    let released = false;
    const hold: BudgetHold = {
      release: () => {
        if (released || max === 0) return;
        released = true;
        this.held.delete(slotId);
        this.deps.stores.slots.release(key, slotId).catch((err: unknown) => this.deps.logger.warn({ err }, 'could not release a turn slot; it lapses'));
      },
    };
    if (round.newExecute) {
      try {
        await this.charge(caller, key);
      } catch (e) {
        hold.release();
        throw e;
      }
    }
    return hold;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.held.values()].map(({ key, slotId }) => this.deps.stores.slots.release(key, slotId).catch(() => undefined)));
    this.held.clear();
    await this.deps.stores.slots.close();
    await this.deps.stores.close?.();
  }

  private async charge(caller: Caller, userKey: string): Promise<void> {
    const { userExecutes, orgExecutes } = this.deps.stores;
    const { executesPerMinute, orgExecutesPerMinute } = this.deps.limits;
    if (userExecutes) {
      await this.consume(userExecutes, userKey, `at most ${executesPerMinute} executes per minute per user`, 'executesPerMinute');
    }
    if (!orgExecutes) return;
    try {
      await this.consume(orgExecutes, JSON.stringify([caller.orgId]), `the organisation's ${orgExecutesPerMinute} executes per minute are spent`, 'orgExecutesPerMinute');
    } catch (e) {
      await userExecutes?.reward(userKey).catch(() => undefined);
      throw e;
    }
  }

  private async consume(limiter: RateLimiterAbstract, key: string, message: string, budget: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw rateLimited(message, Math.max(1, Math.ceil(e.msBeforeNext / 1000)), budget);
      // A budget store that fails (with no fallback) must not stop the service.
      this.deps.logger.warn({ err: e, budget }, 'execute budget unavailable; admitting');
    }
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    try {
      await this.deps.stores.slots.renew([...this.held.values()], this.deps.slotTtlMs);
    } catch (err) {
      this.deps.logger.warn({ err }, 'could not renew turn slots');
    }
  }
}

function rateLimited(message: string, retryAfterSeconds: number, budget: string): DomainError {
  return new DomainError('RATE_LIMITED', `${message}; retry in ${retryAfterSeconds} s`, { retryAfterSeconds, budget });
}

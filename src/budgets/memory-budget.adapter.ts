import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { BudgetLimits, BudgetStores } from './execute-budget';
import { MemorySlotLedger } from './slot-ledger';

/** Per-minute windows of `points` executes; null when unlimited (0). */
export function memoryRate(points: number, keyPrefix: string): RateLimiterMemory | null {
  return points > 0 ? new RateLimiterMemory({ points, duration: 60, keyPrefix }) : null;
}

/** Budgets counted in this process (no REDIS_URL): each instance counts its own. */
export function memoryBudgetStores(limits: BudgetLimits): BudgetStores {
  return {
    userExecutes: memoryRate(limits.executesPerMinute, 'exec-user'),
    orgExecutes: memoryRate(limits.orgExecutesPerMinute, 'exec-org'),
    slots: new MemorySlotLedger(),
  };
}

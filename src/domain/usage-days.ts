import { badInput } from './errors';
import type { TurnStatus } from './turn-status';

/** A year and a day, so "the same day last year" is still in range. */
export const MAX_USAGE_DAYS = 366;
export const DEFAULT_USAGE_DAYS = 30;

/** Whose turns a usage report counts: an admin's whole organisation, or the caller's own turns. */
export type UsageScope = 'ORGANIZATION' | 'CALLER';

/** Turns created on one UTC calendar day, by their current status, and what they cost. */
export interface UsageDay {
  /** YYYY-MM-DD (UTC). */
  readonly date: string;
  readonly turns: Readonly<Record<TurnStatus, number>>;
  /** Sum of the turns' estimated costs; turns without an estimate add nothing. */
  readonly estimatedCostUsd: number;
}

export interface UsageByDay {
  readonly scope: UsageScope;
  /** Oldest first, one entry per day of the window, days without turns included. */
  readonly days: readonly UsageDay[];
}

/** One row of the store's aggregate: a day, a status, how many turns and their summed cost. */
export interface UsageAggregateRow {
  readonly date: string;
  readonly status: TurnStatus;
  readonly turns: number;
  readonly estimatedCostUsd: number;
}

export function assertUsageDays(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_USAGE_DAYS) {
    throw badInput(`days must be between 1 and ${MAX_USAGE_DAYS}`, { argument: 'days' });
  }
  return days;
}

/** The window of `days` UTC calendar days ending today: its first midnight and its dates. */
export function usageWindow(now: Date, days: number): { readonly since: Date; readonly dates: readonly string[] } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const dayMs = 24 * 60 * 60 * 1000;
  const since = new Date(today - (days - 1) * dayMs);
  const dates = Array.from({ length: days }, (_, i) => new Date(since.getTime() + i * dayMs).toISOString().slice(0, 10));
  return { since, dates };
}

/** Spreads aggregate rows over every day of the window; rows outside it are ignored. */
export function fillUsageDays(dates: readonly string[], rows: readonly UsageAggregateRow[]): UsageDay[] {
  const byDate = new Map(
    dates.map((date) => [date, { date, turns: { PENDING: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0 }, estimatedCostUsd: 0 }]),
  );
  for (const row of rows) {
    const day = byDate.get(row.date);
    if (!day) continue;
    day.turns[row.status] += row.turns;
    day.estimatedCostUsd = Math.round((day.estimatedCostUsd + row.estimatedCostUsd) * 1e6) / 1e6;
  }
  return [...byDate.values()];
}

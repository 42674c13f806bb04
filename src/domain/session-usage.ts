import type { SessionRecord } from './session';
import type { TurnRecord } from './turn';
import type { TurnStatus } from './turn-status';
import type { TurnUsage } from './usage';

/** The turn with `usage` as its usage so far; no usage reported keeps what the turn had. */
export function withUsage(turn: TurnRecord, usage: TurnUsage | null | undefined): TurnRecord {
  if (!usage) return turn;
  const { inputTokens, outputTokens, cachedInputTokens = 0, estimatedCostUsd, isEstimated } = usage;
  return {
    ...turn,
    usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cachedInputTokens, estimatedCostUsd, isEstimated },
  };
}

/** What a settled turn adds to its session's totals (spec 003): no usage counts as zero tokens and no cost. */
export function turnUsageDelta(turn: TurnRecord): {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  estimatedCostUsd: number | null;
} {
  return {
    inputTokens: turn.usage?.inputTokens ?? 0,
    outputTokens: turn.usage?.outputTokens ?? 0,
    cachedInputTokens: turn.usage?.cachedInputTokens ?? 0,
    estimatedCostUsd: turn.usage?.estimatedCostUsd ?? null,
  };
}

/** What a turn leaving PENDING changes on its session. */
export interface SessionRollUp {
  readonly lastUpdatedDate: Date;
  /** The session's totals with the turn's usage added. */
  readonly usage: TurnUsage;
  /** The session's last-turn facts, when the turn is its last one (an older turn settling leaves them). */
  readonly lastTurn: { readonly status: TurnStatus; readonly date: Date } | null;
}

type UsageDelta = ReturnType<typeof turnUsageDelta>;

/**
 * The session's totals with `turn`'s usage in place of `replaced` (nothing, when the turn
 * settles now). The cost stays unknown until some turn has one, and is estimated once any
 * turn's usage was.
 */
function movedTotals(totals: TurnUsage, turn: TurnRecord, replaced: UsageDelta | null): TurnUsage {
  const added = turnUsageDelta(turn);
  const removed = replaced ?? { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, estimatedCostUsd: null };
  const inputTokens = totals.inputTokens + added.inputTokens - removed.inputTokens;
  const outputTokens = totals.outputTokens + added.outputTokens - removed.outputTokens;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    cachedInputTokens: (totals.cachedInputTokens ?? 0) + added.cachedInputTokens - removed.cachedInputTokens,
    estimatedCostUsd:
      added.estimatedCostUsd === null && removed.estimatedCostUsd === null
        ? totals.estimatedCostUsd
        : (totals.estimatedCostUsd ?? 0) + (added.estimatedCostUsd ?? 0) - (removed.estimatedCostUsd ?? 0),
    isEstimated: totals.isEstimated || (turn.usage?.isEstimated ?? false),
  };
}

/**
 * A settled turn whose usage was completed afterwards (cancelled from another instance, the
 * running one reporting what the interrupted round spent): the session's totals move by the
 * difference; its last-turn facts stay.
 */
export function rollUpLateUsage(session: Pick<SessionRecord, 'usage' | 'lastUpdatedDate'>, before: TurnRecord, after: TurnRecord): SessionRollUp {
  return { lastUpdatedDate: session.lastUpdatedDate, usage: movedTotals(session.usage, after, turnUsageDelta(before)), lastTurn: null };
}

/**
 * DD-002 and spec 003: a turn's usage is added to its session once, when the turn leaves
 * PENDING (earlier rounds of a tool continuation are part of it).
 */
export function rollUpSettledTurn(session: Pick<SessionRecord, 'usage' | 'turnCount'>, turn: TurnRecord): SessionRollUp {
  return {
    lastUpdatedDate: turn.statusTimeStamp,
    usage: movedTotals(session.usage, turn, null),
    lastTurn: turn.sequenceNumber === session.turnCount ? { status: turn.status, date: turn.statusTimeStamp } : null,
  };
}

/** rollUpSettledTurn as a change to whatever the session's totals are when it is written, for a write that has not read them. */
export interface SessionRollUpDelta {
  readonly lastUpdatedDate: Date;
  readonly added: UsageDelta;
  /** The session's usage becomes estimated (it never stops being so). */
  readonly estimated: boolean;
  /** The session's last-turn facts, taken only while its newest turn is this one. */
  readonly lastTurn: { readonly sequenceNumber: number; readonly status: TurnStatus; readonly date: Date };
}

/** The same rule as rollUpSettledTurn (DD-002, spec 003), without the session: see SessionRollUpDelta. */
export function settledTurnDelta(turn: TurnRecord): SessionRollUpDelta {
  return {
    lastUpdatedDate: turn.statusTimeStamp,
    added: turnUsageDelta(turn),
    estimated: turn.usage?.isEstimated ?? false,
    lastTurn: { sequenceNumber: turn.sequenceNumber, status: turn.status, date: turn.statusTimeStamp },
  };
}

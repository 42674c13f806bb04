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

/**
 * A settled turn whose usage was completed afterwards (cancelled from another instance, the
 * running one reporting what the interrupted round spent): the session's totals move by the
 * difference; its last-turn facts stay.
 */
export function rollUpLateUsage(session: Pick<SessionRecord, 'usage' | 'lastUpdatedDate'>, before: TurnRecord, after: TurnRecord): SessionRollUp {
  const was = turnUsageDelta(before);
  const now = turnUsageDelta(after);
  const inputTokens = session.usage.inputTokens + now.inputTokens - was.inputTokens;
  const outputTokens = session.usage.outputTokens + now.outputTokens - was.outputTokens;
  const cost =
    now.estimatedCostUsd === null && was.estimatedCostUsd === null
      ? session.usage.estimatedCostUsd
      : (session.usage.estimatedCostUsd ?? 0) + (now.estimatedCostUsd ?? 0) - (was.estimatedCostUsd ?? 0);
  return {
    lastUpdatedDate: session.lastUpdatedDate,
    usage: {
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      cachedInputTokens: (session.usage.cachedInputTokens ?? 0) + now.cachedInputTokens - was.cachedInputTokens,
      estimatedCostUsd: cost,
      isEstimated: session.usage.isEstimated || (after.usage?.isEstimated ?? false),
    },
    lastTurn: null,
  };
}

/**
 * DD-002 and spec 003: a turn's usage is added to its session once, when the turn leaves
 * PENDING (earlier rounds of a tool continuation are part of it). The session's cost stays
 * unknown until some turn has a cost, and is estimated once any turn's usage was.
 */
export function rollUpSettledTurn(session: Pick<SessionRecord, 'usage' | 'turnCount'>, turn: TurnRecord): SessionRollUp {
  const delta = turnUsageDelta(turn);
  const inputTokens = session.usage.inputTokens + delta.inputTokens;
  const outputTokens = session.usage.outputTokens + delta.outputTokens;
  return {
    lastUpdatedDate: turn.statusTimeStamp,
    usage: {
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      cachedInputTokens: (session.usage.cachedInputTokens ?? 0) + delta.cachedInputTokens,
      estimatedCostUsd:
        delta.estimatedCostUsd === null ? session.usage.estimatedCostUsd : (session.usage.estimatedCostUsd ?? 0) + delta.estimatedCostUsd,
      isEstimated: session.usage.isEstimated || (turn.usage?.isEstimated ?? false),
    },
    lastTurn: turn.sequenceNumber === session.turnCount ? { status: turn.status, date: turn.statusTimeStamp } : null,
  };
}

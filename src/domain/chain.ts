import { restartWarning, type ChainRestartReason } from './chain-restart';
import type { TurnRecord } from './turn';

/** Spec 001 section 9: the provider keeps response state for roughly 30 days. */
export const DEFAULT_CHAIN_TTL_SECONDS = 30 * 24 * 3600;

/** The turn fields the chain rules read. */
export type ChainTurn = Pick<
  TurnRecord,
  | 'id'
  | 'sequenceNumber'
  | 'status'
  | 'conversationId'
  | 'openAIResponseId'
  | 'previousOpenAIResponseId'
  | 'openAIChainExpiresDate'
  | 'activeFileRefs'
  | 'chunkRefs'
>;

/**
 * Spec 001 sections 8, 9, 11 and issue 10: continue the provider conversation of the
 * session's last COMPLETED response while it is alive, even when later turns FAILED or were
 * CANCELLED (their inputs never joined that chain); otherwise start a new one, preloaded
 * from history, and say why.
 */
export type ChainDecision =
  | {
      readonly kind: 'continue';
      readonly previousResponseId: string;
      /** The chain is only as durable as its oldest link, so it keeps the first link's expiry. */
      readonly expiresAt: Date;
      readonly conversationId: string | null;
      /** The turns of the live chain, oldest first (what the model already received). */
      readonly links: readonly ChainTurn[];
    }
  | { readonly kind: 'new'; readonly reason: ChainRestartReason; readonly warning: string | null };

/** `history` is the session's turns in sequence order; the newest completed one decides. */
export function decideChain(history: readonly ChainTurn[], now: Date): ChainDecision {
  if (history.length === 0) return newChain('FIRST_TURN');
  const at = history.findLastIndex((t) => t.status === 'COMPLETED' && t.openAIResponseId);
  const last = history[at];
  if (!last?.openAIResponseId) return newChain('NO_USABLE_PREVIOUS_RESPONSE');
  const expiresAt = last.openAIChainExpiresDate;
  if (!expiresAt || expiresAt.getTime() <= now.getTime()) return newChain('EXPIRED', expiresAt);
  return {
    kind: 'continue',
    previousResponseId: last.openAIResponseId,
    expiresAt,
    conversationId: last.conversationId,
    links: linksEndingAt(at, history),
  };
}

const newChain = (reason: ChainRestartReason, expiredAt: Date | null = null): ChainDecision => ({
  kind: 'new',
  reason,
  warning: restartWarning(reason, expiredAt),
});

/**
 * Follows previousOpenAIResponseId back from `history[at]` through the session's turns. A
 * turn's previous response belongs to an earlier turn, so each link is looked for before the
 * one found last: one pass back through the history, however long the chain.
 */
function linksEndingAt(at: number, history: readonly ChainTurn[]): ChainTurn[] {
  let current = history[at]!;
  const links: ChainTurn[] = [current];
  let i = at - 1;
  while (current.previousOpenAIResponseId) {
    const wanted = current.previousOpenAIResponseId;
    while (i >= 0 && history[i]!.openAIResponseId !== wanted) i--;
    if (i < 0) break;
    current = history[i--]!;
    links.push(current);
  }
  return links.reverse();
}

/** When the chain this turn's response belongs to stops being reliable. */
export function chainExpiryOf(decision: ChainDecision, receivedAt: Date, ttlSeconds: number): Date {
  return decision.kind === 'continue' ? decision.expiresAt : new Date(receivedAt.getTime() + ttlSeconds * 1000);
}

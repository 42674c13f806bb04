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

export type NewChainReason = 'first_turn' | 'expired' | 'previous_failed' | 'previous_cancelled' | 'no_response';

/**
 * Spec 001 sections 8, 9, 11: continue the provider conversation of the session's last
 * completed response while it is alive; otherwise start a new one, preloaded from history.
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
  | { readonly kind: 'new'; readonly reason: NewChainReason; readonly warning: string | null };

/** `history` is the session's turns in sequence order; the newest decides. */
export function decideChain(history: readonly ChainTurn[], now: Date): ChainDecision {
  const last = history[history.length - 1];
  if (!last) return { kind: 'new', reason: 'first_turn', warning: null };
  const restart = 'this turn starts a new model conversation preloaded from the session history';
  if (last.status === 'FAILED') {
    return { kind: 'new', reason: 'previous_failed', warning: `The previous turn failed, so ${restart}.` };
  }
  if (last.status === 'CANCELLED') {
    return { kind: 'new', reason: 'previous_cancelled', warning: `The previous turn was cancelled, so ${restart}.` };
  }
  if (last.status !== 'COMPLETED' || !last.openAIResponseId) {
    return { kind: 'new', reason: 'no_response', warning: `The previous turn has no model response to continue, so ${restart}.` };
  }
  const expiresAt = last.openAIChainExpiresDate;
  if (!expiresAt || expiresAt.getTime() <= now.getTime()) {
    const when = expiresAt ? ` on ${expiresAt.toISOString()}` : '';
    return { kind: 'new', reason: 'expired', warning: `The session's model conversation expired${when}; ${restart}.` };
  }
  return {
    kind: 'continue',
    previousResponseId: last.openAIResponseId,
    expiresAt,
    conversationId: last.conversationId,
    links: linksEndingAt(last, history),
  };
}

/** Follows previousOpenAIResponseId back from `last` through the session's turns. */
function linksEndingAt(last: ChainTurn, history: readonly ChainTurn[]): ChainTurn[] {
  const byResponse = new Map<string, ChainTurn>();
  for (const t of history) if (t.openAIResponseId) byResponse.set(t.openAIResponseId, t);
  const links: ChainTurn[] = [last];
  const visited = new Set([last.id]);
  let current = last;
  while (current.previousOpenAIResponseId) {
    const previous = byResponse.get(current.previousOpenAIResponseId);
    if (!previous || visited.has(previous.id)) break;
    links.push(previous);
    visited.add(previous.id);
    current = previous;
  }
  return links.reverse();
}

/** When the chain this turn's response belongs to stops being reliable. */
export function chainExpiryOf(decision: ChainDecision, receivedAt: Date, ttlSeconds: number): Date {
  return decision.kind === 'continue' ? decision.expiresAt : new Date(receivedAt.getTime() + ttlSeconds * 1000);
}

import { DomainError } from './errors';
import type { TurnRecord } from './turn';
import { isTerminal } from './turn-status';

/**
 * AGN-033 3.1: a follow-on request carries SessionId + TurnId. With a new instruction the
 * TurnId must name the session's latest turn, finished (the turn the new one follows);
 * anything else is refused before anything changes.
 */
export function checkFollowsTurn(history: readonly Pick<TurnRecord, 'id' | 'status'>[], sessionId: string, turnId: string): void {
  const last = history[history.length - 1];
  if (last && last.id === turnId && isTerminal(last.status)) return;
  throw new DomainError('TURN_NOT_LATEST', `turn ${turnId} is not the latest finished turn of the session; send the latest turn's id, or none`, {
    sessionId,
    turnId,
    field: 'turnId',
  });
}

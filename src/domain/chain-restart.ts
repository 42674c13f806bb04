/**
 * Why a turn's provider conversation (chain) started afresh (issue 10 item 1). A turn that
 * continued a chain has no reason (null).
 */
export const CHAIN_RESTART_REASONS = ['FIRST_TURN', 'EXPIRED', 'LOST_BY_PROVIDER', 'NO_USABLE_PREVIOUS_RESPONSE'] as const;
export type ChainRestartReason = (typeof CHAIN_RESTART_REASONS)[number];

const RESTART = 'this turn starts a new model conversation preloaded from the session history';

/** The warning a new chain carries, for the reasons a user should hear about. */
export function restartWarning(reason: ChainRestartReason, expiredAt: Date | null = null): string | null {
  switch (reason) {
    case 'FIRST_TURN':
      return null;
    case 'EXPIRED':
      return `The session's model conversation expired${expiredAt ? ` on ${expiredAt.toISOString()}` : ''}; ${RESTART}.`;
    case 'LOST_BY_PROVIDER':
      return `The model provider no longer knew this session's conversation, so ${RESTART}.`;
    case 'NO_USABLE_PREVIOUS_RESPONSE':
      return `No earlier turn has a model response to continue, so ${RESTART}.`;
  }
}

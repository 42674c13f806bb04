import { conflict } from './errors';

export const TURN_STATUSES = ['PENDING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];
export type TerminalTurnStatus = Exclude<TurnStatus, 'PENDING'>;

export const isTerminal = (status: TurnStatus): status is TerminalTurnStatus => status !== 'PENDING';

export const isTurnStatus = (value: string): value is TurnStatus =>
  (TURN_STATUSES as readonly string[]).includes(value);

/**
 * DD-002B/C and the CANCELLED extension: a turn leaves PENDING exactly once and a terminal
 * turn is never mutated. Throws CONFLICT otherwise.
 */
export function assertTransition(from: TurnStatus, to: TerminalTurnStatus): void {
  if (from !== 'PENDING') {
    throw conflict(`turn is already ${from.toLowerCase()}; it cannot become ${to.toLowerCase()}`, {
      currentStatus: from,
    });
  }
}

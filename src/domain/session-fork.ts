import { conflict } from './errors';
import type { SessionRecord } from './session';
import type { TurnRecord } from './turn';
import type { TurnUsage } from './usage';
import { LIMITS, requireText } from './validation';

/** Where a fork came from: the session and the turn it was forked at (its last copied turn). */
export interface ForkOrigin {
  readonly sessionId: string;
  readonly turnId: string;
}

/** A fork's origin, and what its copied turns used: charged to the turns they are copies of, not again. */
export interface SessionForkRecord extends ForkOrigin {
  readonly inheritedUsage: TurnUsage;
}

/**
 * Issue 39: a session can be forked at a finished turn of a session that is not deleted.
 * A turn still PENDING has no answer to continue from yet.
 */
export function checkForkPoint(session: Pick<SessionRecord, 'isDeleted'>, turn: Pick<TurnRecord, 'status'>): void {
  if (session.isDeleted) throw conflict('the session is deleted');
  if (turn.status === 'PENDING') throw conflict('the turn is not finished yet: fork from a finished turn', { turnStatus: turn.status });
}

/** The fork's name: the one given, else the source's with " (fork)", within the name limit. */
export function forkName(source: Pick<SessionRecord, 'name'>, name: string | null | undefined): string {
  if (name !== null && name !== undefined) return requireText('name', name, LIMITS.name);
  const suffix = ' (fork)';
  return `${source.name.slice(0, LIMITS.name - suffix.length)}${suffix}`;
}

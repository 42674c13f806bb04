import { isAdmin, type Caller } from './caller';

/** The facts about a session that decide who may read it. */
export interface SessionAccessFacts {
  readonly orgId: string;
  readonly ownerUserId: string;
  readonly isPublic: boolean;
  readonly isDeleted: boolean;
}

/**
 * Who may read a session: nobody outside its org; in the org, admins always (deleted ones
 * included), others when they own it, take part in it, or it is public and not deleted.
 * The SQL list predicate in sessions/session-query.ts states the same rule for lists.
 */
export function canRead(caller: Caller, session: SessionAccessFacts, isParticipant: boolean): boolean {
  if (session.orgId !== caller.orgId) return false;
  if (isAdmin(caller)) return true;
  if (session.isDeleted) return false;
  return session.ownerUserId === caller.userId || session.isPublic || isParticipant;
}

/** Renaming, publishing or deleting a session is for its owner and the org's admins. */
export function canManage(caller: Caller, session: SessionAccessFacts): boolean {
  return session.orgId === caller.orgId && (isAdmin(caller) || session.ownerUserId === caller.userId);
}

/** Stopping a turn is for its author, the session's owner and the org's admins. */
export function canCancelTurn(
  caller: Caller,
  session: Pick<SessionAccessFacts, 'orgId' | 'ownerUserId'>,
  turn: { readonly createdByUser: { readonly id: string } },
): boolean {
  if (session.orgId !== caller.orgId) return false;
  return isAdmin(caller) || turn.createdByUser.id === caller.userId || session.ownerUserId === caller.userId;
}

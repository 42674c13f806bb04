import type { Caller, OrgScope } from '../domain/caller';
import type { PageRequest } from '../domain/pagination';
import type { SessionRecord } from '../domain/session';
import type { ForkOrigin, SessionForkRecord } from '../domain/session-fork';
import type { SessionPage } from './session-store.port';

/** What a fork is made from: its id (chosen first: the fork's blobs are stored before it exists), name and origin. */
export interface NewFork extends ForkOrigin {
  readonly id: string;
  readonly name: string;
}

/**
 * Port: sessions forked at a turn (issue 39). The fork is written in one transaction: the
 * session (the caller its owner and only participant), copies of the source's turns up to
 * and including the fork's turn, and its lineage. NOT_FOUND for a session or turn the caller
 * cannot read, CONFLICT for a turn that is not finished or a deleted session.
 */
export interface SessionForkStore {
  fork(caller: Caller, fork: NewFork): Promise<SessionRecord>;
}

/** Lineage reads for the DataLoaders and the `forks` connection; scoped to the caller's org. */
export interface SessionForkReader {
  /** The origin of each session that is a fork. */
  originsOf(scope: OrgScope, sessionIds: readonly string[]): Promise<Map<string, SessionForkRecord>>;
  /** The turn each copied turn is a copy of. */
  turnOriginsOf(scope: OrgScope, turnIds: readonly string[]): Promise<Map<string, ForkOrigin>>;
  /** The forks of a session the caller may read, newest first. */
  forksOf(caller: Caller, sessionId: string, page: PageRequest): Promise<SessionPage>;
}

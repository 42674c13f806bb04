import type { Caller, EntityHeader, OrgScope } from '../domain/caller';
import type { ChainTurn } from '../domain/chain';
import type { ListPageRequest, Page } from '../domain/pagination';
import type { NewSession, SessionFilter, SessionOrder, SessionPatch, SessionRecord } from '../domain/session';
import type {
  ChunkRef,
  ExpiredTurn,
  NewTurn,
  TurnChainRestart,
  TurnPartialAnswer,
  TurnCancellation,
  TurnCompletion,
  TurnFailure,
  TurnRecord,
  TurnToolPause,
} from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';

/**
 * The session store (spec IAgentSessionManager), as each of its users sees it: the
 * orchestrator writes turns (TurnStore) and holds leases (TurnLeases); resolvers read
 * (SessionReader), batch for their DataLoaders (SessionBatchReader) and change sessions
 * (SessionCommands), never turns or leases.
 *
 * Errors: what the rules of domain/turn-transitions.ts and domain/session-rules.ts refuse, as
 * DomainError (NOT_FOUND for what the caller cannot read, FORBIDDEN, CONFLICT, SESSION_BUSY,
 * BAD_USER_INPUT); and StoreUnavailableError (UnavailableError of the 'session store',
 * SERVICE_UNAVAILABLE) whenever the database cannot be reached, in which case nothing was
 * written. Events of a change are published only after it commits.
 */

export interface AddTurnOptions {
  /** Refuse with SESSION_BUSY while the session's last turn is still PENDING. */
  readonly rejectIfBusy?: boolean;
  /** The instance running the turn and until when it promises to finish or renew. */
  readonly lease?: { readonly owner: string; readonly expiresAt: Date };
  /**
   * The session as the caller read it moments ago (the planner's read). While it is still so,
   * the turn is written without reading the session again (on MySQL one round trip); the
   * result is the same either way.
   */
  readonly seen?: SessionRecord | null;
}

/** Port: the turns the orchestrator runs, and the sessions they belong to. */
export interface TurnStore {
  getSession(caller: Caller, id: string): Promise<SessionRecord | null>;
  getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null>;
  /** The session's last `limit` turns (any status), oldest first. */
  recentTurns(scope: OrgScope, session: Pick<SessionRecord, 'id' | 'turnCount'>, limit: number): Promise<TurnRecord[]>;
  createSession(caller: Caller, input: NewSession): Promise<SessionRecord>;
  /** DD-002A: a new PENDING turn with the next sequence number; the author becomes a participant. */
  addTurn(caller: Caller, sessionId: string, input: NewTurn, options?: AddTurnOptions): Promise<TurnRecord>;
  /** createSession and addTurn of its first turn, as one change: both are stored, or neither. */
  startSession(caller: Caller, session: NewSession, first: NewTurn, options?: AddTurnOptions): Promise<TurnRecord>;
  /** DD-002B. */
  completeTurn(scope: OrgScope, sessionId: string, turnId: string, completion: TurnCompletion): Promise<TurnRecord>;
  /** DD-002C. */
  failTurn(scope: OrgScope, sessionId: string, turnId: string, failure: TurnFailure): Promise<TurnRecord>;
  /** The turn `caller` may cancel (domain `checkCancel`): PENDING, or CANCELLED already. */
  turnToCancel(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord>;
  /** Stops a PENDING turn (domain `checkCancel` decides who may); a CANCELLED one is returned unchanged. */
  cancelTurn(caller: Caller, sessionId: string, turnId: string, cancellation?: TurnCancellation): Promise<TurnRecord>;
  /** Chunks retrieval found once the turn existed, indexed for provenance; those already on it are skipped. */
  recordChunkRefs(scope: OrgScope, sessionId: string, turnId: string, chunkRefs: readonly ChunkRef[]): Promise<TurnRecord>;
  /** AGN-033: the PENDING turn waits for the client's tools; no instance holds it, its lease becomes the deadline. */
  pauseForToolCalls(scope: OrgScope, sessionId: string, turnId: string, pause: TurnToolPause): Promise<TurnRecord>;
  /** Takes a turn that waits on exactly these tool calls back into work for `lease.owner`; CONFLICT when it no longer waits. */
  resumeTurn(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    toolCallIds: readonly string[],
    lease: { readonly owner: string; readonly expiresAt: Date },
  ): Promise<TurnRecord>;
  /** Issue 10: the PENDING turn retries on a new chain (the provider lost its previous response); no event, the status stays. */
  restartTurnChain(scope: OrgScope, sessionId: string, turnId: string, restart: TurnChainRestart): Promise<TurnRecord>;
  /** The partial answer of a turn cancelled while this instance ran it (cancelled from another instance). */
  keepPartialAnswer(scope: OrgScope, sessionId: string, turnId: string, partial: TurnPartialAnswer): Promise<TurnRecord>;
  /** DD-002C for a turn whose lease ran out; null when its lease was renewed meanwhile (it stays PENDING). */
  failExpiredTurn(turn: ExpiredTurn, failure: TurnFailure): Promise<TurnRecord | null>;
}

/**
 * Port: a session's recent turns as the planner reads them on every execute: only the fields
 * of the chain and file rules (domain/chain.ts), not whole turns (their texts, tool calls and
 * JSON documents cost most of a full read, and the planner needs them only to preload a new chain).
 */
export interface ChainHistoryReader {
  /** The session's newest `limit` turns (any status), oldest first; it may include one added after the session was read. */
  chainTurns(scope: OrgScope, sessionId: string, limit: number): Promise<ChainTurn[]>;
}

/** Port: the store's side of ChainHistoryReader, which a cache of settled turns reads through (chain-history-cache.ts). */
export interface ChainTurnSource {
  /** The session's newest `limit` turns numbered after `afterSequence` (any status), oldest first. */
  chainTurnsAfter(scope: OrgScope, sessionId: string, afterSequence: number, limit: number): Promise<ChainTurn[]>;
}

/** Port: leases of running turns, so nothing is lost when an instance dies. */
export interface TurnLeases {
  /** Extends this instance's leases; returns the turns it no longer holds (finished, cancelled or swept). */
  renewLeases(owner: string, turnIds: readonly string[], expiresAt: Date): Promise<string[]>;
  /** Shutdown: the owner's PENDING turns expire now, so any live instance's sweeper settles them. */
  releaseLeases(owner: string): Promise<void>;
  /** PENDING turns whose lease ran out, oldest deadline first (any org: the sweeper is a system task). */
  expiredTurns(limit: number): Promise<ExpiredTurn[]>;
}

/**
 * A session as a list hands it out: the fields of the list view (GraphQL AgentSessionSummary)
 * and of its cursors, not the whole record, so a page reads no column it cannot show.
 */
export interface SessionSummaryRecord
  extends Pick<
    SessionRecord,
    | 'id'
    | 'name'
    | 'key'
    | 'description'
    | 'isPublic'
    | 'category'
    | 'ownerUser'
    | 'creationDate'
    | 'lastUpdatedDate'
    | 'agentContextId'
    | 'conversationContextId'
    | 'turnCount'
    | 'lastTurnStatus'
    | 'lastTurnDate'
  > {
  /**
   * The DD-007 names of its contexts, read with the page when the list was asked for them
   * (ListOptions.withContextNames), else absent; null when the context no longer exists
   * (or the session has none).
   */
  readonly contextNames?: { readonly agent: string | null; readonly conversation: string | null };
}

export interface SessionPage extends Page<SessionSummaryRecord> {
  /** Counted only when asked for: most list views never show it. */
  readonly totalCount: () => Promise<number>;
  /** Whether totalCount stopped at a cap (sessions/session-list.ts COUNT_CAP) and more exist; absent: exact. */
  readonly countIsLowerBound?: () => Promise<boolean>;
}

export interface ListOptions {
  /** The caller will want totalCount: it is counted alongside the page rather than after it. */
  readonly withTotalCount: boolean;
  /** The caller will show context names: they are joined into the page (default: not read). */
  readonly withContextNames?: boolean;
}

/** DD-003 reads: only what the caller may see (a session of another org reads exactly like a missing one). */
export interface SessionReader {
  getSession(caller: Caller, id: string): Promise<SessionRecord | null>;
  /** DD-003 GetFullAgentSessionTurnAsync: a turn is only reachable through its session. */
  getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null>;
  /** DD-003 GetLastAgentSessionTurnAsync: highest sequence number, any status. */
  getLastTurn(caller: Caller, sessionId: string): Promise<TurnRecord | null>;
  /** DD-003 GetAgentSessionsAsync: the sessions visible to the caller, filtered and ordered. */
  listSessions(caller: Caller, filter: SessionFilter, order: SessionOrder, page: ListPageRequest, options?: ListOptions): Promise<SessionPage>;
  /** DD-003 GetAgentSessionsForUserAsync: owned by the user or with a turn of theirs. */
  listSessionsForUser(caller: Caller, userId: string, page: ListPageRequest, options?: ListOptions): Promise<SessionPage>;
  /** Refuses a filter the caller may not use (includeDeleted) or with over-long values, as listSessions does. */
  assertFilter(caller: Caller, filter: SessionFilter): void;
}

export interface TurnWindow {
  readonly afterSequence: number;
  readonly limit: number;
  readonly status: TurnStatus | null;
}

/** Batch reads for per-request DataLoaders: one statement per batch, scoped to the caller's org. */
export interface SessionBatchReader {
  /** Sessions by id, restricted to what the caller may read. */
  sessionsByIds(caller: Caller, ids: readonly string[]): Promise<SessionRecord[]>;
  /**
   * Sessions by id, any of the org's (deleted ones too): what the live layer reads once per
   * event to route it and to decide, per subscriber, who may have it (domain/visibility.ts).
   * Never handed to a resolver.
   */
  sessionsInOrg(scope: OrgScope, ids: readonly string[]): Promise<SessionRecord[]>;
  /** Turns by id, only those in sessions the caller may read. */
  turnsByIds(caller: Caller, ids: readonly string[]): Promise<TurnRecord[]>;
  /** The turn with the highest sequence number of each session. */
  lastTurnsOf(scope: OrgScope, sessions: readonly Pick<SessionRecord, 'id' | 'turnCount'>[]): Promise<TurnRecord[]>;
  /** Owner first, then everyone who added a turn, in order of joining. */
  participantsOf(scope: OrgScope, sessionIds: readonly string[]): Promise<Map<string, EntityHeader[]>>;
  /** One page of turns for each session: sequence numbers after `afterSequence`, optionally of one status. */
  turnsOf(scope: OrgScope, sessionIds: readonly string[], window: TurnWindow): Promise<Map<string, TurnRecord[]>>;
  /** How many turns of one status each session has (turnCount answers the unfiltered case). */
  countTurns(scope: OrgScope, sessionIds: readonly string[], status: TurnStatus): Promise<Map<string, number>>;
}

/** The session changes mutation resolvers may make: renaming, publishing, deleting (owner or admin). */
export interface SessionCommands {
  updateSession(caller: Caller, id: string, patch: SessionPatch): Promise<SessionRecord>;
  /** Soft delete. Deleting an already deleted session (admins can still see it) is a no-op. */
  deleteSession(caller: Caller, id: string): Promise<boolean>;
}

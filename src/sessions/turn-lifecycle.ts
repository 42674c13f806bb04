import { userHeader, type Caller, type OrgScope } from '../domain/caller';
import type { NewSession, SessionPatch, SessionRecord } from '../domain/session';
import { openSession } from '../domain/session-rules';
import { rollUpLateUsage, rollUpSettledTurn, settledTurnDelta } from '../domain/session-usage';
import type {
  ChunkRef,
  ExpiredTurn,
  NewTurn,
  TurnCancellation,
  TurnChainRestart,
  TurnCompletion,
  TurnFailure,
  TurnPartialAnswer,
  TurnRecord,
  TurnToolPause,
} from '../domain/turn';
import {
  addChunkRefs,
  applyTransition,
  assertAcceptsTurn,
  checkCancel,
  checkNewTurn,
  keepPartialAnswer,
  openTurn,
  pauseForToolCalls,
  restartTurnChain,
  resumeWithToolResults,
  turnRefusal,
  type CheckedNewTurn,
  type TurnTransition,
} from '../domain/turn-transitions';
import type { TurnStatus } from '../domain/turn-status';
import type { EventLogWriter } from '../events/event-log-writer';
import type { TurnEventSink, TurnStatusEvent } from '../events/turn-events';
import type { Database } from '../persistence/database';
import type { WebhookOutbox } from '../webhooks/webhook-outbox';
import { StaleReadError, type SqlTransaction, type SqlValue, type Statement } from '../persistence/sql';
import type { ProvenanceEntities } from './provenance.entities';
import {
  INSERT_SESSION,
  INSERT_TURN,
  NO_LEASE,
  rollUpDeltaStatement,
  rollUpStatement,
  sessionValues,
  SETTLE_TURN,
  SETTLE_TURN_AS_WRITTEN,
  toSessionRecord,
  toSessionRow,
  toTurnRecord,
  turnOrigin,
  turnValues,
  UPDATE_TURN,
  type TurnLease,
} from './records';
import type { SessionLocks } from './session-locks';
import type { AddTurnOptions, SessionBatchReader, SessionCommands, SessionReader, TurnStore } from './session-store.port';
import type { SessionEntities, SessionRow, TurnRow } from './session.entities';
import { indexTurnRefs } from './turn-provenance';
import { WrittenTurns, type WrittenTurn } from './written-turns';

const ADD_TURN_TO_SESSION = `UPDATE agent_sessions SET turn_count = ?, last_turn_status = 'PENDING', last_turn_date = ?, last_updated_date = ?
  WHERE id = ? AND org_id = ?`;
/** ADD_TURN_TO_SESSION while the session is as seen: its turn count, last status ('' for none), deleted and public flags. */
const ADD_TURN_TO_SEEN_SESSION = `${ADD_TURN_TO_SESSION}
  AND turn_count = ? AND COALESCE(last_turn_status, '') = ? AND is_deleted = ? AND is_public = ?`;
const UPDATE_CHUNK_REFS = 'UPDATE agent_session_turns SET chunk_refs = ?, revision = revision + 1 WHERE id = ? AND org_id = ?';

export interface TurnLifecycleDeps {
  readonly db: Database<SessionEntities & ProvenanceEntities>;
  readonly locks: SessionLocks;
  /** Writes each status change to turn_events inside the change's transaction. */
  readonly eventLog: EventLogWriter;
  /** Where events go once their transaction has committed. */
  readonly events: TurnEventSink;
  /** Writes the webhook deliveries of a change inside the change's transaction. */
  readonly outbox: Pick<WebhookOutbox, 'statements'>;
  readonly reads: Pick<SessionReader, 'getSession' | 'getTurn'>;
  readonly batch: Pick<SessionBatchReader, 'turnsOf'>;
  /** Changes to a session's own fields (SessionCommands), which move no turn. */
  readonly edits: SessionCommands;
  readonly now: () => Date;
  readonly newId: () => string;
}

/**
 * The only writer of sessions and turns. Every invariant of DD-002 holds inside one
 * transaction per change, whatever the caller does: sequence numbers are contiguous per
 * session (the session row is locked while the next number is taken: by a locking read, or
 * by the guarded UPDATE of addTurnAsSeen, which takes the number only if nobody took one
 * since the caller's read), a turn leaves PENDING
 * once, terminal turns are never written again (the rules of domain/turn-transitions.ts),
 * and the session's counters and usage move in the same transaction as its turns. The status
 * event is stored in that transaction too, and published only once it has committed. A turn
 * this instance wrote last is settled without a locking read (settleAsWritten), guarded on
 * its revision.
 */
export class TurnLifecycle implements TurnStore, SessionCommands {
  private readonly written = new WrittenTurns();

  constructor(private readonly deps: TurnLifecycleDeps) {}

  getSession(caller: Caller, id: string): Promise<SessionRecord | null> {
    return this.deps.reads.getSession(caller, id);
  }

  getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null> {
    return this.deps.reads.getTurn(caller, sessionId, turnId);
  }

  async recentTurns(scope: OrgScope, session: Pick<SessionRecord, 'id' | 'turnCount'>, limit: number): Promise<TurnRecord[]> {
    const window = { afterSequence: Math.max(0, session.turnCount - limit), limit, status: null };
    return (await this.deps.batch.turnsOf(scope, [session.id], window)).get(session.id) ?? [];
  }

  async createSession(caller: Caller, input: NewSession): Promise<SessionRecord> {
    const session = openSession(caller, input, { id: input.id ?? this.deps.newId(), now: this.deps.now() });
    await this.deps.db.sqlTransaction((tx) => tx.commitWith(this.sessionWrites(caller, toSessionRow(session))));
    return session;
  }

  async addTurn(caller: Caller, sessionId: string, input: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    const checked = checkNewTurn(input);
    const { seen } = options;
    if (seen && seen.id === sessionId && !turnRefusal(seen, options)) {
      const added = await this.addTurnAsSeen(caller, seen, checked, input.id ?? this.deps.newId(), options);
      if (added) return added;
    }
    const { db, locks } = this.deps;
    const { turn, event } = await db.sqlTransaction(async (tx) => {
      const session = await locks.visibleSession(tx, caller, sessionId);
      assertAcceptsTurn(session, options);
      const now = this.deps.now();
      const turn = openTurn(checked, { id: input.id ?? this.deps.newId(), session, author: userHeader(caller), now });
      const writes = [
        ...this.turnWrites(turn, now, options),
        ...(session.callerIsParticipant ? [] : [locks.addParticipant(session, userHeader(caller), now)]),
      ];
      return { turn, event: await this.commitWithEvent(tx, writes, turn, null) };
    });
    this.written.remember(turn, 0);
    this.deps.events.turnStatusChanged(event);
    return turn;
  }

  /**
   * The turn written against the session as the caller saw it, with no locking read: the
   * session's UPDATE comes first and changes the row only while the turn count, the last
   * turn's status and the deleted and public flags are still as seen (everything addTurn
   * decides on, visibility included), else the transaction stops there and rolls back. On
   * MySQL one round trip. Null when the session has changed: addTurn then locks and decides again.
   */
  private async addTurnAsSeen(
    caller: Caller,
    seen: SessionRecord,
    checked: CheckedNewTurn,
    id: string,
    options: AddTurnOptions,
  ): Promise<TurnRecord | null> {
    const now = this.deps.now();
    const author = userHeader(caller);
    // The caller read the session in its own org (SessionReader reads are scoped so).
    const session = { id: seen.id, orgId: caller.orgId, turnCount: seen.turnCount };
    const turn = openTurn(checked, { id, session, author, now });
    const writes: Statement[] = [
      {
        sql: ADD_TURN_TO_SEEN_SESSION,
        params: [...sessionCounters(turn, now), seen.turnCount, seen.lastTurnStatus ?? '', seen.isDeleted, seen.isPublic],
        mustChangeOneRow: true,
      },
      ...turnRows(turn, options),
      // The owner has taken part since the session was created; anyone else may be new.
      ...(seen.ownerUser.id === caller.userId ? [] : [this.deps.locks.joinIfNew(session, author, now)]),
    ];
    const added = await this.commitGuarded(writes, turn, null);
    if (added) this.written.remember(added, 0);
    return added;
  }

  /**
   * A new session and its first turn in one transaction, with nothing to read first: the
   * session row is inserted here, so its state (no turns, the caller its owner and only
   * participant) is known, and it is inserted with its first turn counted. On MySQL one round trip.
   */
  async startSession(caller: Caller, input: NewSession, first: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    const checked = checkNewTurn(first);
    const now = this.deps.now();
    const session = openSession(caller, input, { id: input.id ?? this.deps.newId(), now });
    const row = toSessionRow(session);
    const turn = openTurn(checked, { id: first.id ?? this.deps.newId(), session: row, author: userHeader(caller), now });
    const counted: SessionRow = { ...row, turnCount: turn.sequenceNumber, lastTurnStatus: turn.status, lastTurnDate: now, lastUpdatedDate: now };
    const writes = [...this.sessionWrites(caller, counted), ...turnRows(turn, options)];
    const event = await this.deps.db.sqlTransaction((tx) => this.commitWithEvent(tx, writes, turn, null));
    this.written.remember(turn, 0);
    this.deps.events.turnStatusChanged(event);
    return turn;
  }

  completeTurn(scope: OrgScope, sessionId: string, turnId: string, completion: TurnCompletion): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'COMPLETED', completion });
  }

  failTurn(scope: OrgScope, sessionId: string, turnId: string, failure: TurnFailure): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'FAILED', failure });
  }

  async turnToCancel(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord> {
    const [turn, session] = await Promise.all([this.getTurn(caller, sessionId, turnId), this.getSession(caller, sessionId)]);
    return checkCancel(caller, session, turn);
  }

  async cancelTurn(
    caller: Caller,
    sessionId: string,
    turnId: string,
    cancellation: TurnCancellation = { reason: 'cancelled by user' },
  ): Promise<TurnRecord> {
    const current = await this.turnToCancel(caller, sessionId, turnId);
    if (current.status === 'CANCELLED') return current;
    return this.transition(caller, sessionId, turnId, { to: 'CANCELLED', cancellation });
  }

  recordChunkRefs(scope: OrgScope, sessionId: string, turnId: string, chunkRefs: readonly ChunkRef[]): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return this.rememberWrite(
      db.sqlTransaction(async (tx) => {
        const row = await locks.turn(tx, scope, sessionId, turnId);
        const current = toTurnRecord(row);
        const { turn, added } = addChunkRefs(current, chunkRefs);
        if (added.length === 0) return { turn, revision: row.revision };
        await tx.commitWith([
          { sql: UPDATE_CHUNK_REFS, params: [JSON.stringify(turn.chunkRefs), turn.id, turn.orgId] },
          ...indexTurnRefs(turn, { chunkRefs: added, activeFileRefs: [] }, current),
        ]);
        return { turn, revision: row.revision + 1 };
      }),
    );
  }

  /** The status does not change, so no event is recorded. The turn runs on wherever its tool results arrive. */
  pauseForToolCalls(scope: OrgScope, sessionId: string, turnId: string, pause: TurnToolPause): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    this.written.forget(scope.orgId, turnId);
    return db.sqlTransaction(async (tx) => {
      const turn = pauseForToolCalls(toTurnRecord(await locks.turn(tx, scope, sessionId, turnId)), pause);
      const writes = [updateTurn(UPDATE_TURN, turn, { owner: null, expiresAt: pause.waitUntil })];
      await tx.commitWith([...writes, ...this.deps.outbox.statements({ kind: 'awaiting-tool-results', turn })]);
      return turn;
    });
  }

  resumeTurn(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    toolCallIds: readonly string[],
    lease: { readonly owner: string; readonly expiresAt: Date },
  ): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return this.rememberWrite(
      db.sqlTransaction(async (tx) => {
        const row = await locks.turn(tx, scope, sessionId, turnId);
        // While a turn waits for tool results, its lease is the tool-result deadline.
        const turn = resumeWithToolResults(toTurnRecord(row), toolCallIds, row.leaseExpiresAt, this.deps.now());
        await tx.commitWith([updateTurn(UPDATE_TURN, turn, lease)]);
        return { turn, revision: row.revision + 1 };
      }),
    );
  }

  restartTurnChain(scope: OrgScope, sessionId: string, turnId: string, restart: TurnChainRestart): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return this.rememberWrite(
      db.sqlTransaction(async (tx) => {
        const row = await locks.turn(tx, scope, sessionId, turnId);
        const turn = restartTurnChain(toTurnRecord(row), restart);
        await tx.commitWith([updateTurn(UPDATE_TURN, turn, leaseOf(row))]);
        return { turn, revision: row.revision + 1 };
      }),
    );
  }

  keepPartialAnswer(scope: OrgScope, sessionId: string, turnId: string, partial: TurnPartialAnswer): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return db.sqlTransaction(async (tx) => {
      const { session, turn: row } = await locks.sessionAndTurn(tx, scope, sessionId, turnId);
      const current = toTurnRecord(row);
      const turn = keepPartialAnswer(current, partial);
      if (!turn) return current;
      await tx.commitWith([
        updateTurn(UPDATE_TURN, turn, leaseOf(row)),
        ...(turn.usage !== current.usage ? [rollUpStatement(rollUpLateUsage(toSessionRecord(session), current, turn), session)] : []),
      ]);
      return turn;
    });
  }

  /** Re-checked under the row lock: a lease renewed since `expiredTurns` read it wins, and the turn stays PENDING. */
  async failExpiredTurn(turn: ExpiredTurn, failure: TurnFailure): Promise<TurnRecord | null> {
    const now = this.deps.now();
    const result = await this.transition(
      turn,
      turn.sessionId,
      turn.turnId,
      { to: 'FAILED', failure },
      (row) => row.status === 'PENDING' && row.leaseExpiresAt !== null && row.leaseExpiresAt.getTime() < now.getTime(),
    );
    return result.status === 'FAILED' ? result : null;
  }

  updateSession(caller: Caller, id: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.deps.edits.updateSession(caller, id, patch);
  }

  deleteSession(caller: Caller, id: string): Promise<boolean> {
    return this.deps.edits.deleteSession(caller, id);
  }

  /** A new session's rows: the session, and its owner as its first participant. */
  private sessionWrites(owner: Caller, row: SessionRow): Statement[] {
    const created = this.deps.outbox.statements({ kind: 'session-created', session: toSessionRecord(row), forkedFrom: null });
    return [{ sql: INSERT_SESSION, params: sessionValues(row) }, this.deps.locks.addParticipant(row, userHeader(owner), row.creationDate), ...created];
  }

  /** A new PENDING turn's rows: the turn, its provenance index, and its session's counters. */
  private turnWrites(turn: TurnRecord, now: Date, options: AddTurnOptions): Statement[] {
    return [...turnRows(turn, options), { sql: ADD_TURN_TO_SESSION, params: sessionCounters(turn, now) }];
  }

  /**
   * Runs `writes` and the change's webhook deliveries, then stores the status event, and
   * commits. The event's statements come last: they lock the event counter row, which every
   * turn change of every session passes, until COMMIT (on MySQL all of it is one round trip).
   */
  private async commitWithEvent(
    tx: SqlTransaction,
    writes: readonly Statement[],
    turn: TurnRecord,
    previousStatus: TurnStatus | null,
  ): Promise<TurnStatusEvent> {
    const append = this.deps.eventLog.append(turn, previousStatus);
    const before = [...writes, ...this.deps.outbox.statements({ kind: 'turn-status', turn, previousStatus })];
    const results = await tx.commitWith([...before, ...append.statements]);
    return append.event(results.slice(before.length));
  }

  private async transition(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    change: TurnTransition,
    guard?: (row: TurnRow) => boolean,
  ): Promise<TurnRecord> {
    const written = this.written.take(scope.orgId, sessionId, turnId);
    if (written && !guard) {
      const settled = await this.settleAsWritten(written, change);
      if (settled) return settled;
    }
    const { db, locks } = this.deps;
    const { turn, event } = await db.sqlTransaction(async (tx): Promise<{ turn: TurnRecord; event: TurnStatusEvent | null }> => {
      const { session, turn: row } = await locks.sessionAndTurn(tx, scope, sessionId, turnId);
      const current = toTurnRecord(row);
      const updated = !guard || guard(row) ? applyTransition(current, change, this.deps.now()) : null;
      if (!updated) return { turn: current, event: null };
      const writes = [updateTurn(SETTLE_TURN, updated, NO_LEASE), rollUpStatement(rollUpSettledTurn(toSessionRecord(session), updated), session)];
      return { turn: updated, event: await this.commitWithEvent(tx, writes, updated, current.status) };
    });
    if (event) this.deps.events.turnStatusChanged(event);
    return turn;
  }

  /** The turn a transaction wrote, remembered once the transaction has committed (not merely sent its COMMIT). */
  private async rememberWrite(committed: Promise<WrittenTurn>): Promise<TurnRecord> {
    const { turn, revision } = await committed;
    this.written.remember(turn, revision);
    return turn;
  }

  /**
   * The turn settled from what this instance last wrote of it, with no locking read: the
   * turn's UPDATE comes first and changes the row only while it is PENDING at the revision
   * that write left, else the transaction stops there and rolls back; the session's roll-up
   * moves its totals where they stand (settledTurnDelta). On MySQL one round trip. Null when
   * the turn has been written since: `transition` then locks and decides again.
   */
  private async settleAsWritten({ turn: current, revision }: WrittenTurn, change: TurnTransition): Promise<TurnRecord | null> {
    const updated = applyTransition(current, change, this.deps.now());
    if (!updated) return null;
    const writes: Statement[] = [
      { sql: SETTLE_TURN_AS_WRITTEN, params: [...turnValues(updated, NO_LEASE), updated.id, updated.orgId, revision], mustChangeOneRow: true },
      rollUpDeltaStatement(settledTurnDelta(updated), { id: updated.sessionId, orgId: updated.orgId }),
    ];
    return this.commitGuarded(writes, updated, current.status);
  }

  /**
   * `writes` (led by a guarded statement), the status event and COMMIT in a transaction of
   * their own, the event published once committed. Null when the guard found its row changed:
   * nothing was kept, and the caller decides again under a lock.
   */
  private async commitGuarded(writes: readonly Statement[], turn: TurnRecord, previousStatus: TurnStatus | null): Promise<TurnRecord | null> {
    try {
      const event = await this.deps.db.sqlTransaction((tx) => this.commitWithEvent(tx, writes, turn, previousStatus));
      this.deps.events.turnStatusChanged(event);
      return turn;
    } catch (e) {
      if (e instanceof StaleReadError) return null;
      throw e;
    }
  }
}

/** A new PENDING turn's own rows: the turn and its provenance index. */
const turnRows = (turn: TurnRecord, options: AddTurnOptions): Statement[] => [
  { sql: INSERT_TURN, params: [...turnOrigin(turn), ...turnValues(turn, options.lease ?? NO_LEASE)] },
  ...indexTurnRefs(turn, turn),
];

/** ADD_TURN_TO_SESSION's values for `turn`, the session's newest. */
const sessionCounters = (turn: TurnRecord, now: Date): SqlValue[] => [turn.sequenceNumber, now, now, turn.sessionId, turn.orgId];

/** Every column of `turn` but its identity (UPDATE_TURN, or SETTLE_TURN for a turn that must still be PENDING). */
const updateTurn = (sql: string, turn: TurnRecord, lease: TurnLease): Statement => ({ sql, params: [...turnValues(turn, lease), turn.id, turn.orgId] });

const leaseOf = (row: TurnRow): TurnLease => ({ owner: row.leaseOwner, expiresAt: row.leaseExpiresAt });

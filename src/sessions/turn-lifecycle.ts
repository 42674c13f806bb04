import { userHeader, type Caller, type OrgScope } from '../domain/caller';
import { conflict, forbidden } from '../domain/errors';
import type { NewSession, SessionPatch, SessionRecord } from '../domain/session';
import { checkSessionPatch, openSession } from '../domain/session-rules';
import { rollUpLateUsage, rollUpSettledTurn } from '../domain/session-usage';
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
  type TurnTransition,
} from '../domain/turn-transitions';
import { canManage } from '../domain/visibility';
import type { EventLogWriter } from '../events/event-log-writer';
import type { TurnEventSink, TurnStatusEvent } from '../events/turn-events';
import type { Database } from '../persistence/database';
import type { ProvenanceEntities } from './provenance.entities';
import { NO_LEASE, rollUpColumns, toSessionRecord, toSessionRow, toTurnRecord, toTurnRow, turnColumns } from './records';
import type { SessionLocks } from './session-locks';
import type { AddTurnOptions, SessionBatchReader, SessionCommands, SessionReader, TurnStore } from './session-store.port';
import type { SessionEntities, TurnRow } from './session.entities';
import { indexTurnRefs } from './turn-provenance';

export interface TurnLifecycleDeps {
  readonly db: Database<SessionEntities & ProvenanceEntities>;
  readonly locks: SessionLocks;
  /** Writes each status change to turn_events inside the change's transaction. */
  readonly eventLog: EventLogWriter;
  /** Where events go once their transaction has committed. */
  readonly events: TurnEventSink;
  readonly reads: Pick<SessionReader, 'getSession' | 'getTurn'>;
  readonly batch: Pick<SessionBatchReader, 'turnsOf'>;
  readonly now: () => Date;
  readonly newId: () => string;
}

/**
 * The only writer of sessions and turns. Every invariant of DD-002 holds inside one
 * transaction per change, whatever the caller does: sequence numbers are contiguous per
 * session (the session row is locked while the next number is taken), a turn leaves PENDING
 * once, terminal turns are never written again (the rules of domain/turn-transitions.ts),
 * and the session's counters and usage move in the same transaction as its turns. The status
 * event is stored in that transaction too, and published only once it has committed.
 */
export class TurnLifecycle implements TurnStore, SessionCommands {
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
    const row = toSessionRow(session);
    await this.deps.db.transaction(async (em) => {
      await em.insert(this.deps.db.entities.sessions, row);
      await this.deps.locks.addParticipant(em, row, userHeader(caller), session.creationDate);
    });
    return session;
  }

  async addTurn(caller: Caller, sessionId: string, input: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    const checked = checkNewTurn(input);
    const { db, locks } = this.deps;
    const { turn, event } = await db.transaction(async (em) => {
      const session = await locks.visibleSession(em, caller, sessionId);
      assertAcceptsTurn(session, options);
      const now = this.deps.now();
      const turn = openTurn(checked, { id: input.id ?? this.deps.newId(), session, author: userHeader(caller), now });
      // updateEntity(false): TypeORM would read the new row's defaulted columns back, one SELECT per turn.
      await em.createQueryBuilder().insert().into(db.entities.turns).values(toTurnRow(turn, options.lease ?? NO_LEASE)).updateEntity(false).execute();
      await indexTurnRefs(em, db.entities, turn, turn);
      await em.update(db.entities.sessions, { id: session.id }, {
        turnCount: turn.sequenceNumber,
        lastTurnStatus: 'PENDING',
        lastTurnDate: now,
        lastUpdatedDate: now,
      });
      if (!session.callerIsParticipant) await locks.addParticipant(em, session, userHeader(caller), now);
      return { turn, event: await this.deps.eventLog.append(em, turn, null) };
    });
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
    return db.transaction(async (em) => {
      const current = toTurnRecord(await locks.turn(em, scope, sessionId, turnId));
      const { turn, added } = addChunkRefs(current, chunkRefs);
      if (added.length === 0) return turn;
      await em.update(db.entities.turns, { id: turn.id }, { chunkRefs: [...turn.chunkRefs] });
      await indexTurnRefs(em, db.entities, turn, { chunkRefs: added, activeFileRefs: [] }, current);
      return turn;
    });
  }

  /** The status does not change, so no event is recorded. */
  pauseForToolCalls(scope: OrgScope, sessionId: string, turnId: string, pause: TurnToolPause): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return db.transaction(async (em) => {
      const turn = pauseForToolCalls(toTurnRecord(await locks.turn(em, scope, sessionId, turnId)), pause);
      await em.update(db.entities.turns, { id: turn.id }, turnColumns(turn, { owner: null, expiresAt: pause.waitUntil }));
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
    return db.transaction(async (em) => {
      const row = await locks.turn(em, scope, sessionId, turnId);
      // While a turn waits for tool results, its lease is the tool-result deadline.
      const turn = resumeWithToolResults(toTurnRecord(row), toolCallIds, row.leaseExpiresAt, this.deps.now());
      await em.update(db.entities.turns, { id: turn.id }, turnColumns(turn, lease));
      return turn;
    });
  }

  restartTurnChain(scope: OrgScope, sessionId: string, turnId: string, restart: TurnChainRestart): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return db.transaction(async (em) => {
      const row = await locks.turn(em, scope, sessionId, turnId);
      const turn = restartTurnChain(toTurnRecord(row), restart);
      await em.update(db.entities.turns, { id: turn.id }, turnColumns(turn, { owner: row.leaseOwner, expiresAt: row.leaseExpiresAt }));
      return turn;
    });
  }

  keepPartialAnswer(scope: OrgScope, sessionId: string, turnId: string, partial: TurnPartialAnswer): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    return db.transaction(async (em) => {
      const session = await locks.session(em, scope, sessionId);
      const row = await locks.turn(em, scope, session.id, turnId);
      const current = toTurnRecord(row);
      const turn = keepPartialAnswer(current, partial);
      if (!turn) return current;
      await em.update(db.entities.turns, { id: turn.id }, turnColumns(turn, { owner: row.leaseOwner, expiresAt: row.leaseExpiresAt }));
      if (turn.usage !== current.usage) {
        await em.update(db.entities.sessions, { id: session.id }, rollUpColumns(rollUpLateUsage(toSessionRecord(session), current, turn)));
      }
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

  async updateSession(caller: Caller, id: string, patch: SessionPatch): Promise<SessionRecord> {
    const changes = checkSessionPatch(patch);
    const { db, locks } = this.deps;
    const row = await db.transaction(async (em) => {
      const session = await locks.visibleSession(em, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may change a session');
      if (session.isDeleted) throw conflict('the session is deleted');
      const lastUpdatedDate = this.deps.now();
      await em.update(db.entities.sessions, { id }, { ...changes, lastUpdatedDate });
      return { ...session, ...changes, lastUpdatedDate };
    });
    return toSessionRecord(row);
  }

  async deleteSession(caller: Caller, id: string): Promise<boolean> {
    const { db, locks } = this.deps;
    await db.transaction(async (em) => {
      const session = await locks.visibleSession(em, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may delete a session');
      if (session.isDeleted) return;
      await em.update(db.entities.sessions, { id }, { isDeleted: true, lastUpdatedDate: this.deps.now() });
    });
    return true;
  }

  private async transition(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    change: TurnTransition,
    guard: (row: TurnRow) => boolean = () => true,
  ): Promise<TurnRecord> {
    const { db, locks } = this.deps;
    const { turn, event } = await db.transaction(async (em): Promise<{ turn: TurnRecord; event: TurnStatusEvent | null }> => {
      const session = await locks.session(em, scope, sessionId);
      const row = await locks.turn(em, scope, session.id, turnId);
      const current = toTurnRecord(row);
      const updated = guard(row) ? applyTransition(current, change, this.deps.now()) : null;
      if (!updated) return { turn: current, event: null };
      await em.update(db.entities.turns, { id: row.id, status: 'PENDING' }, turnColumns(updated, NO_LEASE));
      await em.update(db.entities.sessions, { id: session.id }, rollUpColumns(rollUpSettledTurn(toSessionRecord(session), updated)));
      return { turn: updated, event: await this.deps.eventLog.append(em, updated, current.status) };
    });
    if (event) this.deps.events.turnStatusChanged(event);
    return turn;
  }
}

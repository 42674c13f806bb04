import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { isAdmin, type Caller, type EntityHeader } from '../domain/caller';
import { conflict, DomainError, forbidden, notFound } from '../domain/errors';
import { assertPageSize, type Page, type PageRequest } from '../domain/pagination';
import type { NewSession, SessionFilter, SessionOrder, SessionPatch, SessionRecord } from '../domain/session';
import { summarize } from '../domain/text';
import type {
  ChunkRef,
  ExpiredTurn,
  NewTurn,
  TurnCancellation,
  TurnCompletion,
  TurnFailure,
  TurnRecord,
  TurnToolPause,
} from '../domain/turn';
import { assertTransition, type TurnStatus } from '../domain/turn-status';
import type { TurnUsage } from '../domain/usage';
import { LIMITS, optionalText, requireText } from '../domain/validation';
import { canCancelTurn, canManage, canRead } from '../domain/visibility';
import type { EventLogEntities } from '../events/event-log.entities';
import { EventLogWriter } from '../events/event-log-writer';
import type { TurnEventSink, TurnStatusEvent } from '../events/turn-events';
import type { Database } from '../persistence/database';
import type { ProvenanceEntities } from './provenance.entities';
import { toSessionRecord, toTurnRecord } from './records';
import { applyFilter, applyOrder, applyVisibility, cursorOf } from './session-query';
import type { SessionEntities, SessionRow, TurnRow } from './session.entities';
import { indexTurnRefs } from './turn-provenance';

/** Whose data a system-side write (completing a turn) may touch. */
export interface OrgScope {
  readonly orgId: string;
}

export interface AddTurnOptions {
  /** Refuse with SESSION_BUSY while the session's last turn is still PENDING. */
  readonly rejectIfBusy?: boolean;
  /** The instance running the turn and until when it promises to finish or renew. */
  readonly lease?: { readonly owner: string; readonly expiresAt: Date };
}

export interface SessionManagerDeps {
  readonly db: Database<SessionEntities & ProvenanceEntities & EventLogEntities>;
  readonly events: TurnEventSink;
  readonly now?: () => Date;
  readonly newId?: () => string;
}

export interface SessionPage extends Page<SessionRecord> {
  /** Counted only when asked for: most list views never show it. */
  readonly totalCount: () => Promise<number>;
}

type Transition =
  | { readonly to: 'COMPLETED'; readonly completion: TurnCompletion }
  | { readonly to: 'FAILED'; readonly failure: TurnFailure }
  | { readonly to: 'CANCELLED'; readonly cancellation: TurnCancellation };

/**
 * Spec IAgentSessionManager: the only writer of sessions and turns. Every invariant of
 * DD-002 is enforced here, inside one transaction per change, whatever the caller does:
 * sequence numbers are contiguous per session (the session row is locked while the next
 * number is taken), a turn leaves PENDING once, terminal turns are never written again,
 * and the session's denormalised counters move in the same transaction as its turns.
 */
export class SessionManager {
  private readonly db: Database<SessionEntities & ProvenanceEntities>;
  private readonly events: TurnEventSink;
  private readonly eventLog: EventLogWriter;
  private readonly now: () => Date;
  private readonly newId: () => string;

  constructor(deps: SessionManagerDeps) {
    this.db = deps.db;
    this.events = deps.events;
    this.now = deps.now ?? (() => new Date());
    this.newId = deps.newId ?? randomUUID;
    this.eventLog = new EventLogWriter(deps.db, this.now);
  }

  // ------------------------------------------------------------------ writes

  async createSession(caller: Caller, input: NewSession): Promise<SessionRecord> {
    const now = this.now();
    const row: SessionRow = {
      id: this.newId(),
      orgId: caller.orgId,
      orgName: caller.orgName,
      ownerUserId: caller.userId,
      ownerUserName: caller.userName,
      name: requireText('name', input.name, LIMITS.name),
      key: optionalText('key', input.key, LIMITS.key),
      description: optionalText('description', input.description, LIMITS.description),
      isPublic: input.isPublic ?? false,
      isDraft: input.isDraft ?? false,
      isDeleted: false,
      category: optionalText('category', input.category, LIMITS.category),
      creationDate: now,
      lastUpdatedDate: now,
      agentContextId: requireText('agentContextId', input.agentContextId, LIMITS.id),
      conversationContextId: optionalText('conversationContextId', input.conversationContextId, LIMITS.id),
      workspaceId: optionalText('workspaceId', input.workspaceId, LIMITS.shortText),
      repo: optionalText('repo', input.repo, LIMITS.shortText),
      defaultLanguage: optionalText('defaultLanguage', input.defaultLanguage, 64),
      turnCount: 0,
      lastTurnStatus: null,
      lastTurnDate: null,
      inputTokens: 0,
      outputTokens: 0,
      estimatedCostUsd: null,
      usageEstimated: false,
    };
    await this.db.transaction(async (em) => {
      await em.insert(this.db.entities.sessions, row);
      await this.addParticipant(em, row, { id: caller.userId, text: caller.userName }, now);
    });
    return toSessionRecord(row);
  }

  /** DD-002A: a new PENDING turn with the next sequence number; the author becomes a participant. */
  async addTurn(caller: Caller, sessionId: string, input: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    const instructionSummary = summarize(input.instructionSummary);
    const mode = requireText('mode', input.mode ?? 'ask', 64);
    const { turn, event } = await this.db.transaction(async (em) => {
      const session = await this.lockSession(em, caller, sessionId);
      if (session.isDeleted) throw conflict('the session is deleted');
      if (options.rejectIfBusy && session.lastTurnStatus === 'PENDING') {
        throw new DomainError('SESSION_BUSY', 'the session is still working on its last turn', {
          sessionId: session.id,
        });
      }
      const now = this.now();
      const row: TurnRow = {
        id: input.id ?? this.newId(),
        sessionId: session.id,
        orgId: session.orgId,
        sequenceNumber: session.turnCount + 1,
        createdByUserId: caller.userId,
        createdByUserName: caller.userName,
        creationDate: now,
        status: 'PENDING',
        statusTimeStamp: now,
        mode,
        conversationId: input.conversationId ?? null,
        openAIModel: input.openAIModel ?? null,
        openAIResponseId: null,
        previousOpenAIResponseId: input.previousOpenAIResponseId ?? null,
        openAIResponseReceivedDate: null,
        openAIChainExpiresDate: null,
        instructionSummary,
        fullInstructionUrl: input.fullInstructionUrl ?? null,
        agentAnswerSummary: null,
        fullAgentAnswerUrl: null,
        openAIRequestPayloadUrl: null,
        openAIResponsePayloadUrl: null,
        chunkRefs: [...(input.chunkRefs ?? [])],
        activeFileRefs: [...(input.activeFileRefs ?? [])],
        pendingToolCalls: [],
        warnings: [...(input.warnings ?? [])],
        errors: [],
        inputTokens: null,
        outputTokens: null,
        usageEstimated: false,
        estimatedCostUsd: null,
        leaseOwner: options.lease?.owner ?? null,
        leaseExpiresAt: options.lease?.expiresAt ?? null,
      };
      await em.insert(this.db.entities.turns, row);
      await indexTurnRefs(em, this.db.entities, row, row);
      await em.update(this.db.entities.sessions, { id: session.id }, {
        turnCount: row.sequenceNumber,
        lastTurnStatus: 'PENDING',
        lastTurnDate: now,
        lastUpdatedDate: now,
      });
      if (!session.callerIsParticipant) await this.addParticipant(em, session, { id: caller.userId, text: caller.userName }, now);
      const event = await this.eventLog.append(em, statusChange(row, null));
      return { turn: row, event };
    });
    this.events.turnStatusChanged(event);
    return toTurnRecord(turn);
  }

  /** DD-002B. */
  completeTurn(scope: OrgScope, sessionId: string, turnId: string, completion: TurnCompletion): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'COMPLETED', completion });
  }

  /** DD-002C. */
  failTurn(scope: OrgScope, sessionId: string, turnId: string, failure: TurnFailure): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'FAILED', failure });
  }

  /**
   * Stops a PENDING turn. The turn's author, the session's owner and admins may; a second
   * cancel of a CANCELLED turn is a no-op, cancelling a COMPLETED or FAILED one is CONFLICT.
   */
  async cancelTurn(
    caller: Caller,
    sessionId: string,
    turnId: string,
    cancellation: TurnCancellation = { reason: 'cancelled by user' },
  ): Promise<TurnRecord> {
    const current = await this.getTurn(caller, sessionId, turnId);
    if (!current) throw notFound('turn');
    const session = await this.getSession(caller, sessionId);
    if (!session) throw notFound('turn');
    const facts = { orgId: session.ownerOrganization.id, ownerUserId: session.ownerUser.id };
    if (!canCancelTurn(caller, facts, current)) {
      throw forbidden('only the turn author, the session owner or an admin may cancel a turn');
    }
    if (current.status === 'CANCELLED') return current;
    return this.transition(caller, sessionId, turnId, { to: 'CANCELLED', cancellation });
  }

  /**
   * Adds the chunks retrieval found to a PENDING turn (retrieval runs once the turn exists)
   * and indexes them for provenance in the same transaction. Chunks already on the turn are skipped.
   */
  async recordChunkRefs(scope: OrgScope, sessionId: string, turnId: string, chunkRefs: readonly ChunkRef[]): Promise<TurnRecord> {
    return this.db.transaction(async (em) => {
      const row = await this.lockTurn(em, scope, sessionId, turnId);
      if (row.status !== 'PENDING') throw conflict(`turn is already ${row.status.toLowerCase()}`);
      const known = new Set(row.chunkRefs.map((c) => c.chunkId));
      const fresh = new Map<string, ChunkRef>();
      for (const c of chunkRefs) if (!known.has(c.chunkId)) fresh.set(c.chunkId, c);
      if (fresh.size === 0) return toTurnRecord(row);
      const added = [...fresh.values()];
      const updated: TurnRow = { ...row, chunkRefs: [...row.chunkRefs, ...added] };
      await em.update(this.db.entities.turns, { id: row.id }, { chunkRefs: updated.chunkRefs });
      await indexTurnRefs(em, this.db.entities, row, { chunkRefs: added, activeFileRefs: [] }, row);
      return toTurnRecord(updated);
    });
  }

  /**
   * AGN-033 continuation: the PENDING turn now waits for the client to run these tools. No
   * instance holds it meanwhile; its lease becomes the tool-result deadline, which the
   * sweeper enforces. The status does not change, so no event is recorded.
   */
  async pauseForToolCalls(scope: OrgScope, sessionId: string, turnId: string, pause: TurnToolPause): Promise<TurnRecord> {
    return this.db.transaction(async (em) => {
      const row = await this.lockTurn(em, scope, sessionId, turnId);
      if (row.status !== 'PENDING') throw conflict(`turn is already ${row.status.toLowerCase()}`);
      const changes: Partial<TurnRow> = {
        pendingToolCalls: [...pause.toolCalls],
        openAIResponseId: pause.openAIResponseId,
        openAIChainExpiresDate: pause.openAIChainExpiresDate,
        openAIRequestPayloadUrl: pause.openAIRequestPayloadUrl,
        openAIResponsePayloadUrl: pause.openAIResponsePayloadUrl,
        leaseOwner: null,
        leaseExpiresAt: pause.waitUntil,
        ...usageColumns(pause.usage),
      };
      await em.update(this.db.entities.turns, { id: row.id }, changes);
      return toTurnRecord({ ...row, ...changes });
    });
  }

  /**
   * Takes a turn that waits on exactly these tool calls back into work for `lease.owner`.
   * CONFLICT when it no longer waits on them: answered already, finished, or past its deadline.
   */
  async resumeTurn(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    toolCallIds: readonly string[],
    lease: { readonly owner: string; readonly expiresAt: Date },
  ): Promise<TurnRecord> {
    return this.db.transaction(async (em) => {
      const row = await this.lockTurn(em, scope, sessionId, turnId);
      const waiting = row.pendingToolCalls.map((c) => c.toolCallId);
      const same = waiting.length === toolCallIds.length && waiting.every((id, i) => id === toolCallIds[i]);
      if (row.status !== 'PENDING' || !same || waiting.length === 0) {
        throw conflict('the turn is no longer waiting for these tool results', { sessionId, turnId });
      }
      if (row.leaseExpiresAt && row.leaseExpiresAt.getTime() <= this.now().getTime()) {
        throw conflict('the turn stopped waiting for tool results', { sessionId, turnId });
      }
      const changes: Partial<TurnRow> = { pendingToolCalls: [], leaseOwner: lease.owner, leaseExpiresAt: lease.expiresAt };
      await em.update(this.db.entities.turns, { id: row.id }, changes);
      return toTurnRecord({ ...row, ...changes });
    });
  }

  // ------------------------------------------------------------------ leases (nothing lost on faults)

  /** Extends this instance's leases; returns the turns it no longer holds (finished, cancelled or swept). */
  async renewLeases(owner: string, turnIds: readonly string[], expiresAt: Date): Promise<string[]> {
    if (turnIds.length === 0) return [];
    return this.db.transaction(async (em) => {
      await em
        .createQueryBuilder()
        .update(this.db.entities.turns)
        .set({ leaseExpiresAt: expiresAt })
        .where('id IN (:...ids)', { ids: [...turnIds] })
        .andWhere('status = :pending', { pending: 'PENDING' })
        .andWhere('lease_owner = :owner', { owner })
        .execute();
      const held = await em
        .createQueryBuilder(this.db.entities.turns, 't')
        .select('t.id', 'id')
        .where('t.id IN (:...ids)', { ids: [...turnIds] })
        .andWhere('t.status = :pending', { pending: 'PENDING' })
        .andWhere('t.leaseOwner = :owner', { owner })
        .getRawMany<{ id: string }>();
      const kept = new Set(held.map((r) => r.id));
      return turnIds.filter((id) => !kept.has(id));
    });
  }

  /** Shutdown: the owner's PENDING turns expire now, so any live instance's sweeper settles them. */
  async releaseLeases(owner: string): Promise<void> {
    await this.db.dataSource.manager
      .createQueryBuilder()
      .update(this.db.entities.turns)
      .set({ leaseExpiresAt: this.now() })
      .where('status = :pending', { pending: 'PENDING' })
      .andWhere('lease_owner = :owner', { owner })
      .execute();
  }

  /** PENDING turns whose lease ran out, oldest deadline first (any org: the sweeper is a system task). */
  async expiredTurns(limit: number): Promise<ExpiredTurn[]> {
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 't')
      .select(['t.id', 't.sessionId', 't.orgId', 't.pendingToolCalls'])
      .where('t.status = :pending', { pending: 'PENDING' })
      .andWhere('t.leaseExpiresAt < :now', { now: this.now() })
      .orderBy('t.leaseExpiresAt', 'ASC')
      .take(limit)
      .getMany();
    return rows.map((r) => ({
      orgId: r.orgId,
      sessionId: r.sessionId,
      turnId: r.id,
      waitingForToolResults: r.pendingToolCalls.length > 0,
    }));
  }

  /**
   * DD-002C for a turn whose lease ran out. Re-checked under the row lock: a lease renewed
   * since `expiredTurns` read it wins, and the turn stays PENDING (null is returned).
   */
  async failExpiredTurn(turn: ExpiredTurn, failure: TurnFailure): Promise<TurnRecord | null> {
    const now = this.now();
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
    const changes: Partial<SessionRow> = {};
    if (patch.name !== undefined) {
      if (patch.name === null) throw new DomainError('BAD_USER_INPUT', 'name cannot be null', { field: 'name' });
      changes.name = requireText('name', patch.name, LIMITS.name);
    }
    if (patch.description !== undefined) changes.description = optionalText('description', patch.description, LIMITS.description);
    if (patch.category !== undefined) changes.category = optionalText('category', patch.category, LIMITS.category);
    if (patch.isPublic !== undefined) {
      if (patch.isPublic === null) throw new DomainError('BAD_USER_INPUT', 'isPublic cannot be null', { field: 'isPublic' });
      changes.isPublic = patch.isPublic;
    }
    const row = await this.db.transaction(async (em) => {
      const session = await this.lockSession(em, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may change a session');
      if (session.isDeleted) throw conflict('the session is deleted');
      const updated: SessionRow = { ...session, ...changes, lastUpdatedDate: this.now() };
      await em.update(this.db.entities.sessions, { id }, { ...changes, lastUpdatedDate: updated.lastUpdatedDate });
      return updated;
    });
    return toSessionRecord(row);
  }

  /** Soft delete. Deleting an already deleted session (admins can still see it) is a no-op. */
  async deleteSession(caller: Caller, id: string): Promise<boolean> {
    await this.db.transaction(async (em) => {
      const session = await this.lockSession(em, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may delete a session');
      if (session.isDeleted) return;
      await em.update(this.db.entities.sessions, { id }, { isDeleted: true, lastUpdatedDate: this.now() });
    });
    return true;
  }

  // ------------------------------------------------------------------ reads (DD-003)

  async getSession(caller: Caller, id: string): Promise<SessionRecord | null> {
    const row = await this.visibleSessionRow(this.db.dataSource.manager, caller, id);
    return row ? toSessionRecord(row) : null;
  }

  /** DD-003 GetFullAgentSessionTurnAsync: a turn is only reachable through its session. */
  async getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null> {
    const session = await this.visibleSessionRow(this.db.dataSource.manager, caller, sessionId);
    if (!session) return null;
    const row = await this.db.dataSource.manager.findOne(this.db.entities.turns, {
      where: { id: turnId, sessionId: session.id },
    });
    return row ? toTurnRecord(row) : null;
  }

  /** DD-003 GetLastAgentSessionTurnAsync: highest sequence number, any status. */
  async getLastTurn(caller: Caller, sessionId: string): Promise<TurnRecord | null> {
    const session = await this.visibleSessionRow(this.db.dataSource.manager, caller, sessionId);
    if (!session || session.turnCount === 0) return null;
    const row = await this.db.dataSource.manager.findOne(this.db.entities.turns, {
      where: { sessionId: session.id, sequenceNumber: session.turnCount },
    });
    return row ? toTurnRecord(row) : null;
  }

  /** DD-003 GetAgentSessionsAsync: the sessions visible to the caller, filtered and ordered. */
  async listSessions(caller: Caller, filter: SessionFilter, order: SessionOrder, page: PageRequest): Promise<SessionPage> {
    const first = assertPageSize(page.first);
    this.assertFilter(caller, filter);
    const base = () => {
      const qb = this.db.dataSource.manager.createQueryBuilder(this.db.entities.sessions, 's');
      applyFilter(qb, caller, filter);
      return qb;
    };
    const qb = base();
    applyOrder(qb, order, page.after);
    const rows = await qb.take(first + 1).getMany();
    const items = rows.slice(0, first);
    let counted: Promise<number> | null = null;
    return {
      items: items.map(toSessionRecord),
      cursors: items.map((r) => cursorOf(order, r)),
      hasNextPage: rows.length > first,
      totalCount: () => (counted ??= base().getCount()),
    };
  }

  /** DD-003 GetAgentSessionsForUserAsync: owned by the user or with a turn of theirs. */
  listSessionsForUser(caller: Caller, userId: string, page: PageRequest): Promise<SessionPage> {
    return this.listSessions(caller, { participantId: userId }, 'LAST_UPDATED_DESC', page);
  }

  // ------------------------------------------------------------------ batch reads (DataLoaders)

  /** Sessions by id, restricted to what the caller may read. */
  async sessionsByIds(caller: Caller, ids: readonly string[]): Promise<SessionRecord[]> {
    if (ids.length === 0) return [];
    const qb = this.db.dataSource.manager.createQueryBuilder(this.db.entities.sessions, 's');
    applyVisibility(qb, caller, isAdmin(caller));
    const rows = await qb.andWhere('s.id IN (:...ids)', { ids: [...ids] }).getMany();
    return rows.map(toSessionRecord);
  }

  /** Turns by id, only those in sessions the caller may read (per-event loaders of subscriptions). */
  async turnsByIds(caller: Caller, ids: readonly string[]): Promise<TurnRecord[]> {
    if (ids.length === 0) return [];
    const visible = this.db.dataSource.manager.createQueryBuilder(this.db.entities.sessions, 's').select('s.id');
    applyVisibility(visible, caller, isAdmin(caller));
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 't')
      .where('t.orgId = :turnOrg', { turnOrg: caller.orgId })
      .andWhere('t.id IN (:...turnIds)', { turnIds: [...ids] })
      .andWhere(`t.sessionId IN (${visible.getQuery()})`)
      .setParameters(visible.getParameters())
      .getMany();
    return rows.map(toTurnRecord);
  }

  /** Refuses a filter the caller may not use (includeDeleted) or with over-long values, as listSessions does. */
  assertFilter(caller: Caller, filter: SessionFilter): void {
    checkFilter(filter);
    if (filter.includeDeleted && !isAdmin(caller)) throw forbidden('includeDeleted is for organisation admins');
  }

  /** The turn with the highest sequence number of each session, in one statement. */
  async lastTurnsOf(scope: OrgScope, sessions: readonly Pick<SessionRecord, 'id' | 'turnCount'>[]): Promise<TurnRecord[]> {
    const withTurns = sessions.filter((s) => s.turnCount > 0);
    if (withTurns.length === 0) return [];
    const qb = this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 't')
      .where('t.orgId = :org', { org: scope.orgId });
    const params: Record<string, string | number> = {};
    const pairs = withTurns.map((s, i) => {
      params[`s${i}`] = s.id;
      params[`n${i}`] = s.turnCount;
      return `(t.sessionId = :s${i} AND t.sequenceNumber = :n${i})`;
    });
    const rows = await qb.andWhere(`(${pairs.join(' OR ')})`, params).getMany();
    return rows.map(toTurnRecord);
  }

  /** Owner first, then everyone who added a turn, in order of joining. */
  async participantsOf(scope: OrgScope, sessionIds: readonly string[]): Promise<Map<string, EntityHeader[]>> {
    const result = new Map<string, EntityHeader[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return result;
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.participants, 'p')
      .where('p.orgId = :org', { org: scope.orgId })
      .andWhere('p.sessionId IN (:...ids)', { ids: [...sessionIds] })
      .orderBy('p.joinedDate', 'ASC')
      .addOrderBy('p.userId', 'ASC')
      .getMany();
    for (const row of rows) result.get(row.sessionId)?.push({ id: row.userId, text: row.userName });
    return result;
  }

  /**
   * One page of turns for each of several sessions, in one statement: sequence numbers
   * after `afterSequence`, optionally of one status, at most `limit` per session.
   */
  async turnsOf(
    scope: OrgScope,
    sessionIds: readonly string[],
    window: { readonly afterSequence: number; readonly limit: number; readonly status: TurnStatus | null },
  ): Promise<Map<string, TurnRecord[]>> {
    const result = new Map<string, TurnRecord[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return result;
    const ranked = this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 't')
      .select('t.id', 'id')
      .addSelect('ROW_NUMBER() OVER (PARTITION BY t.session_id ORDER BY t.sequence_number)', 'rn')
      .where('t.orgId = :org')
      .andWhere('t.sessionId IN (:...ids)')
      .andWhere('t.sequenceNumber > :after');
    if (window.status) ranked.andWhere('t.status = :status');
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 'turn')
      .innerJoin(`(${ranked.getQuery()})`, 'r', 'r.id = turn.id AND r.rn <= :limit')
      .setParameters({
        org: scope.orgId,
        ids: [...sessionIds],
        after: window.afterSequence,
        status: window.status,
        limit: window.limit,
      })
      .orderBy('turn.sequenceNumber', 'ASC')
      .getMany();
    for (const row of rows) result.get(row.sessionId)?.push(toTurnRecord(row));
    return result;
  }

  /** How many turns of one status each session has (turnCount answers the unfiltered case). */
  async countTurns(scope: OrgScope, sessionIds: readonly string[], status: TurnStatus): Promise<Map<string, number>> {
    const result = new Map<string, number>(sessionIds.map((id) => [id, 0]));
    if (sessionIds.length === 0) return result;
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.turns, 't')
      .select('t.sessionId', 'sessionId')
      .addSelect('COUNT(*)', 'n')
      .where('t.orgId = :org', { org: scope.orgId })
      .andWhere('t.sessionId IN (:...ids)', { ids: [...sessionIds] })
      .andWhere('t.status = :status', { status })
      .groupBy('t.sessionId')
      .getRawMany<{ sessionId: string; n: string | number }>();
    for (const row of rows) result.set(row.sessionId, Number(row.n));
    return result;
  }

  // ------------------------------------------------------------------ internals

  private async transition(
    scope: OrgScope,
    sessionId: string,
    turnId: string,
    change: Transition,
    guard: (row: TurnRow) => boolean = () => true,
  ): Promise<TurnRecord> {
    const { turn, event } = await this.db.transaction(async (em) => {
      const session = await this.lockSessionInOrg(em, scope, sessionId);
      const row = await this.lockTurn(em, scope, session.id, turnId);
      if (!guard(row)) return { turn: row, event: null };
      // A cancel racing another cancel stays a no-op, as a second cancel is.
      if (change.to === 'CANCELLED' && row.status === 'CANCELLED') return { turn: row, event: null };
      assertTransition(row.status, change.to);
      const previous = row.status;
      const updated = applyTransition(row, change, this.now());
      const { id: _id, sessionId: _s, orgId: _o, ...columns } = updated;
      await em.update(this.db.entities.turns, { id: row.id, status: 'PENDING' }, columns);
      const usage = turnUsageDelta(updated);
      const sessionChanges: Partial<SessionRow> = {
        lastUpdatedDate: updated.statusTimeStamp,
        inputTokens: session.inputTokens + usage.inputTokens,
        outputTokens: session.outputTokens + usage.outputTokens,
        estimatedCostUsd:
          usage.estimatedCostUsd === null
            ? session.estimatedCostUsd
            : (session.estimatedCostUsd ?? 0) + usage.estimatedCostUsd,
        usageEstimated: session.usageEstimated || updated.usageEstimated,
      };
      if (row.sequenceNumber === session.turnCount) {
        sessionChanges.lastTurnStatus = updated.status;
        sessionChanges.lastTurnDate = updated.statusTimeStamp;
      }
      await em.update(this.db.entities.sessions, { id: session.id }, sessionChanges);
      const event = await this.eventLog.append(em, statusChange(updated, previous));
      return { turn: updated, event };
    });
    if (event) this.events.turnStatusChanged(event);
    return toTurnRecord(turn);
  }

  /** Reads the session the caller may see, locking its row until the transaction ends. */
  private async lockSession(em: EntityManager, caller: Caller, id: string): Promise<SessionRow & { callerIsParticipant: boolean }> {
    const row = await this.lockSessionInOrg(em, caller, id);
    const callerIsParticipant = await this.isParticipant(em, row.id, caller.userId);
    if (!canRead(caller, row, callerIsParticipant)) throw notFound('session');
    return { ...row, callerIsParticipant };
  }


  private async lockSessionInOrg(em: EntityManager, scope: OrgScope, id: string): Promise<SessionRow> {
    const qb = em
      .createQueryBuilder(this.db.entities.sessions, 's')
      .where('s.id = :id', { id })
      .andWhere('s.orgId = :org', { org: scope.orgId });
    // SQLite has no row locks; the database wrapper serialises its transactions instead.
    if (this.db.dialect !== 'sqlite') qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    if (!row) throw notFound('session');
    return row;
  }

  private async lockTurn(em: EntityManager, scope: OrgScope, sessionId: string, turnId: string): Promise<TurnRow> {
    const qb = em
      .createQueryBuilder(this.db.entities.turns, 't')
      .where('t.id = :turnId', { turnId })
      .andWhere('t.sessionId = :sessionId', { sessionId })
      .andWhere('t.orgId = :org', { org: scope.orgId });
    if (this.db.dialect !== 'sqlite') qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    if (!row) throw notFound('turn');
    return row;
  }

  private async visibleSessionRow(em: EntityManager, caller: Caller, id: string): Promise<SessionRow | null> {
    const qb = em.createQueryBuilder(this.db.entities.sessions, 's').where('s.id = :id', { id });
    applyVisibility(qb, caller, isAdmin(caller));
    return qb.getOne();
  }

  private async isParticipant(em: EntityManager, sessionId: string, userId: string): Promise<boolean> {
    const n = await em.count(this.db.entities.participants, { where: { sessionId, userId } });
    return n > 0;
  }

  /** Only for a user who is not yet a participant; the session row is locked (or new), so this cannot race. */
  private async addParticipant(em: EntityManager, session: SessionRow, user: EntityHeader, now: Date): Promise<void> {
    await em.insert(this.db.entities.participants, {
      sessionId: session.id,
      userId: user.id,
      orgId: session.orgId,
      userName: user.text,
      joinedDate: now,
    });
  }
}

function statusChange(turn: TurnRow, previousStatus: TurnStatus | null): Omit<TurnStatusEvent, 'eventId'> {
  return {
    orgId: turn.orgId,
    sessionId: turn.sessionId,
    turnId: turn.id,
    sequenceNumber: turn.sequenceNumber,
    previousStatus,
    status: turn.status,
    statusTimeStamp: turn.statusTimeStamp,
    createdByUser: { id: turn.createdByUserId, text: turn.createdByUserName },
  };
}

/** Over-long filter values are refused rather than silently matching nothing. */
function checkFilter(filter: SessionFilter): void {
  const ids = ['participantId', 'ownerUserId', 'agentContextId', 'conversationContextId'] as const;
  for (const field of ids) optionalText(field, filter[field], LIMITS.id);
  optionalText('workspaceId', filter.workspaceId, LIMITS.shortText);
  optionalText('repo', filter.repo, LIMITS.shortText);
  optionalText('search', filter.search, LIMITS.search);
}

function applyTransition(row: TurnRow, change: Transition, now: Date): TurnRow {
  const base: TurnRow = { ...row, status: change.to, leaseOwner: null, leaseExpiresAt: null, pendingToolCalls: [] };
  switch (change.to) {
    case 'COMPLETED': {
      const c = change.completion;
      return withUsage(
        {
          ...base,
          statusTimeStamp: c.openAIResponseReceivedDate,
          openAIResponseId: c.openAIResponseId,
          openAIResponseReceivedDate: c.openAIResponseReceivedDate,
          openAIChainExpiresDate: c.openAIChainExpiresDate ?? null,
          agentAnswerSummary: summarize(c.agentAnswerSummary),
          fullAgentAnswerUrl: c.fullAgentAnswerUrl,
          openAIRequestPayloadUrl: c.openAIRequestPayloadUrl ?? row.openAIRequestPayloadUrl,
          openAIResponsePayloadUrl: c.openAIResponsePayloadUrl ?? row.openAIResponsePayloadUrl,
          warnings: [...row.warnings, ...(c.warnings ?? [])],
        },
        c.usage,
      );
    }
    case 'FAILED': {
      const f = change.failure;
      const observed = f.openAIResponseReceivedDate ?? now;
      return withUsage(
        {
          ...base,
          statusTimeStamp: observed,
          openAIResponseId: f.openAIResponseId ?? row.openAIResponseId,
          openAIResponseReceivedDate: observed,
          openAIChainExpiresDate: f.openAIChainExpiresDate ?? null,
          openAIRequestPayloadUrl: f.openAIRequestPayloadUrl ?? row.openAIRequestPayloadUrl,
          openAIResponsePayloadUrl: f.openAIResponsePayloadUrl ?? row.openAIResponsePayloadUrl,
          errors: [...row.errors, ...f.errors],
          warnings: [...row.warnings, ...(f.warnings ?? [])],
          agentAnswerSummary: null,
          fullAgentAnswerUrl: null,
        },
        f.usage,
      );
    }
    case 'CANCELLED': {
      const c = change.cancellation;
      return {
        ...base,
        statusTimeStamp: now,
        agentAnswerSummary: c.agentAnswerSummary == null ? null : summarize(c.agentAnswerSummary),
        fullAgentAnswerUrl: c.fullAgentAnswerUrl ?? null,
        warnings: [...row.warnings, c.reason],
      };
    }
  }
}

function withUsage(row: TurnRow, usage: TurnUsage | null | undefined): TurnRow {
  return { ...row, ...usageColumns(usage) };
}

function usageColumns(usage: TurnUsage | null | undefined): Partial<TurnRow> {
  if (!usage) return {};
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    usageEstimated: usage.isEstimated,
    estimatedCostUsd: usage.estimatedCostUsd,
  };
}

function turnUsageDelta(row: TurnRow): { inputTokens: number; outputTokens: number; estimatedCostUsd: number | null } {
  return {
    inputTokens: row.inputTokens ?? 0,
    outputTokens: row.outputTokens ?? 0,
    estimatedCostUsd: row.estimatedCostUsd,
  };
}

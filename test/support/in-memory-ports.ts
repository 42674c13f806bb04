import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BlobStoreUnavailableError, type BlobObject, type BlobStore } from '../../src/blobs/blob-store.port';
import type { ContextLookup } from '../../src/contexts/context-directory.port';
import { userHeader, type Caller, type OrgScope } from '../../src/domain/caller';
import type { AgentContextRecord, ConversationContextRecord } from '../../src/domain/contexts';
import type { ChainTurn } from '../../src/domain/chain';
import { DomainError, notFound, UnavailableError } from '../../src/domain/errors';
import type { NewSession, SessionRecord } from '../../src/domain/session';
import { openSession } from '../../src/domain/session-rules';
import { rollUpLateUsage, rollUpSettledTurn } from '../../src/domain/session-usage';
import type { ChunkRef, ExpiredTurn, NewTurn, TurnCancellation, TurnCompletion, TurnFailure, TurnRecord, TurnToolPause, TurnChainRestart, TurnPartialAnswer } from '../../src/domain/turn';
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
} from '../../src/domain/turn-transitions';
import { canRead } from '../../src/domain/visibility';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import type { TurnOutputDelta, TurnOutputSink, TurnRef } from '../../src/events/turn-output.port';
import type { IdempotencyClaim, IdempotencyKeyStore } from '../../src/idempotency/idempotency.port';
import { LlmError, type LanguageModel, type LlmCallOptions, type LlmRequest, type LlmResponse } from '../../src/llm/llm.port';
import type { Logger } from '../../src/logger.port';
import type { RetrievedChunk, Retriever } from '../../src/retrieval/retrieval.port';
import type { AddTurnOptions, ChainTurnSource, TurnLeases, TurnStore } from '../../src/sessions/session-store.port';

interface Lease {
  readonly owner: string | null;
  readonly expiresAt: Date | null;
}

/**
 * The session store in memory: the same rules as the real one (it calls the domain's
 * transition, pause, cancel and roll-up functions), without a database. `down` makes every
 * call fail as an unreachable database does.
 */
export class InMemoryTurnStore implements TurnStore, TurnLeases, ChainTurnSource {
  readonly sessions = new Map<string, SessionRecord>();
  readonly turns = new Map<string, { turn: TurnRecord; lease: Lease }>();
  readonly events: TurnStatusEvent[] = [];
  private readonly participants = new Map<string, Set<string>>();
  down = false;

  constructor(private readonly now: () => Date = () => new Date()) {}

  async getSession(caller: Caller, id: string): Promise<SessionRecord | null> {
    this.reachable();
    const session = this.sessions.get(id);
    if (!session) return null;
    const facts = { ...session, orgId: session.ownerOrganization.id, ownerUserId: session.ownerUser.id };
    return canRead(caller, facts, this.participants.get(id)?.has(caller.userId) ?? false) ? session : null;
  }

  async getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null> {
    const turn = this.turns.get(turnId)?.turn;
    return (await this.getSession(caller, sessionId)) && turn?.sessionId === sessionId ? turn : null;
  }

  async recentTurns(scope: OrgScope, session: Pick<SessionRecord, 'id' | 'turnCount'>, limit: number): Promise<TurnRecord[]> {
    this.reachable();
    return [...this.turns.values()]
      .map((t) => t.turn)
      .filter((t) => t.orgId === scope.orgId && t.sessionId === session.id && t.sequenceNumber > session.turnCount - limit)
      .sort((a, b) => a.sequenceNumber - b.sequenceNumber);
  }

  async chainTurnsAfter(scope: OrgScope, sessionId: string, afterSequence: number, limit: number): Promise<ChainTurn[]> {
    this.reachable();
    return [...this.turns.values()]
      .map((t) => t.turn)
      .filter((t) => t.orgId === scope.orgId && t.sessionId === sessionId && t.sequenceNumber > afterSequence)
      .sort((a, b) => a.sequenceNumber - b.sequenceNumber)
      .slice(-limit);
  }

  async createSession(caller: Caller, input: NewSession): Promise<SessionRecord> {
    this.reachable();
    const session = openSession(caller, input, { id: input.id ?? randomUUID(), now: this.now() });
    this.sessions.set(session.id, session);
    this.participants.set(session.id, new Set([caller.userId]));
    return session;
  }

  /** Both or neither: the turn is checked before the session exists, and nothing else can fail between them. */
  async startSession(caller: Caller, input: NewSession, first: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    checkNewTurn(first);
    const session = await this.createSession(caller, input);
    return this.addTurn(caller, session.id, first, options);
  }

  async addTurn(caller: Caller, sessionId: string, input: NewTurn, options: AddTurnOptions = {}): Promise<TurnRecord> {
    const checked = checkNewTurn(input);
    if (!(await this.getSession(caller, sessionId))) throw notFound('session');
    // Read again after the await: a concurrent addTurn may have taken the next sequence number meanwhile.
    const session = this.sessions.get(sessionId) as SessionRecord;
    assertAcceptsTurn(session, options);
    const now = this.now();
    const turn = openTurn(checked, {
      id: input.id ?? randomUUID(),
      session: { id: session.id, orgId: session.ownerOrganization.id, turnCount: session.turnCount },
      author: userHeader(caller),
      now,
    });
    this.turns.set(turn.id, { turn, lease: { owner: options.lease?.owner ?? null, expiresAt: options.lease?.expiresAt ?? null } });
    this.sessions.set(session.id, { ...session, turnCount: turn.sequenceNumber, lastTurnStatus: 'PENDING', lastTurnDate: now, lastUpdatedDate: now });
    this.participants.get(session.id)?.add(caller.userId);
    this.record(turn, null);
    return turn;
  }

  completeTurn(scope: OrgScope, sessionId: string, turnId: string, completion: TurnCompletion): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'COMPLETED', completion });
  }

  failTurn(scope: OrgScope, sessionId: string, turnId: string, failure: TurnFailure): Promise<TurnRecord> {
    return this.transition(scope, sessionId, turnId, { to: 'FAILED', failure });
  }

  async turnToCancel(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord> {
    return checkCancel(caller, await this.getSession(caller, sessionId), await this.getTurn(caller, sessionId, turnId));
  }

  async cancelTurn(caller: Caller, sessionId: string, turnId: string, cancellation: TurnCancellation = { reason: 'cancelled by user' }): Promise<TurnRecord> {
    const current = await this.turnToCancel(caller, sessionId, turnId);
    return current.status === 'CANCELLED' ? current : this.transition(caller, sessionId, turnId, { to: 'CANCELLED', cancellation });
  }

  async recordChunkRefs(scope: OrgScope, sessionId: string, turnId: string, chunkRefs: readonly ChunkRef[]): Promise<TurnRecord> {
    const held = this.held(scope, sessionId, turnId);
    const { turn } = addChunkRefs(held.turn, chunkRefs);
    this.turns.set(turnId, { ...held, turn });
    return turn;
  }

  async pauseForToolCalls(scope: OrgScope, sessionId: string, turnId: string, pause: TurnToolPause): Promise<TurnRecord> {
    const turn = pauseForToolCalls(this.held(scope, sessionId, turnId).turn, pause);
    this.turns.set(turnId, { turn, lease: { owner: null, expiresAt: pause.waitUntil } });
    return turn;
  }

  async resumeTurn(scope: OrgScope, sessionId: string, turnId: string, toolCallIds: readonly string[], lease: { owner: string; expiresAt: Date }): Promise<TurnRecord> {
    const held = this.held(scope, sessionId, turnId);
    const turn = resumeWithToolResults(held.turn, toolCallIds, held.lease.expiresAt, this.now());
    this.turns.set(turnId, { turn, lease });
    return turn;
  }

  async restartTurnChain(scope: OrgScope, sessionId: string, turnId: string, restart: TurnChainRestart): Promise<TurnRecord> {
    const held = this.held(scope, sessionId, turnId);
    const turn = restartTurnChain(held.turn, restart);
    this.turns.set(turnId, { turn, lease: held.lease });
    return turn;
  }

  async keepPartialAnswer(scope: OrgScope, sessionId: string, turnId: string, partial: TurnPartialAnswer): Promise<TurnRecord> {
    const held = this.held(scope, sessionId, turnId);
    const turn = keepPartialAnswer(held.turn, partial);
    if (!turn) return held.turn;
    this.turns.set(turnId, { turn, lease: held.lease });
    if (turn.usage !== held.turn.usage) {
      const session = this.sessions.get(sessionId) as SessionRecord;
      this.sessions.set(sessionId, { ...session, usage: rollUpLateUsage(session, held.turn, turn).usage });
    }
    return turn;
  }

  async failExpiredTurn(expired: ExpiredTurn, failure: TurnFailure): Promise<TurnRecord | null> {
    const { lease } = this.held(expired, expired.sessionId, expired.turnId);
    if (lease.expiresAt === null || lease.expiresAt.getTime() >= this.now().getTime()) return null;
    const turn = await this.transition(expired, expired.sessionId, expired.turnId, { to: 'FAILED', failure });
    return turn.status === 'FAILED' ? turn : null;
  }

  async renewLeases(owner: string, turnIds: readonly string[], expiresAt: Date): Promise<string[]> {
    this.reachable();
    return turnIds.filter((id) => {
      const held = this.turns.get(id);
      if (held?.turn.status !== 'PENDING' || held.lease.owner !== owner) return true;
      this.turns.set(id, { ...held, lease: { owner, expiresAt } });
      return false;
    });
  }

  async releaseLeases(owner: string): Promise<void> {
    this.reachable();
    for (const [id, held] of this.turns) {
      if (held.turn.status === 'PENDING' && held.lease.owner === owner) this.turns.set(id, { ...held, lease: { owner, expiresAt: this.now() } });
    }
  }

  async expiredTurns(limit: number): Promise<ExpiredTurn[]> {
    this.reachable();
    const now = this.now().getTime();
    return [...this.turns.values()]
      .filter((t) => t.turn.status === 'PENDING' && t.lease.expiresAt !== null && t.lease.expiresAt.getTime() < now)
      .slice(0, limit)
      .map(({ turn }) => ({ orgId: turn.orgId, sessionId: turn.sessionId, turnId: turn.id, waitingForToolResults: turn.pendingToolCalls.length > 0 }));
  }

  private async transition(scope: OrgScope, sessionId: string, turnId: string, change: TurnTransition): Promise<TurnRecord> {
    const held = this.held(scope, sessionId, turnId);
    const updated = applyTransition(held.turn, change, this.now());
    if (!updated) return held.turn;
    this.turns.set(turnId, { turn: updated, lease: { owner: null, expiresAt: null } });
    const session = this.sessions.get(sessionId) as SessionRecord;
    const rollUp = rollUpSettledTurn(session, updated);
    this.sessions.set(sessionId, {
      ...session,
      lastUpdatedDate: rollUp.lastUpdatedDate,
      usage: rollUp.usage,
      ...(rollUp.lastTurn ? { lastTurnStatus: rollUp.lastTurn.status, lastTurnDate: rollUp.lastTurn.date } : {}),
    });
    this.record(updated, held.turn.status);
    return updated;
  }

  /** The turn, if it is in this org and session (NOT_FOUND otherwise), as a locked read would give it. */
  private held(scope: OrgScope, sessionId: string, turnId: string): { turn: TurnRecord; lease: Lease } {
    this.reachable();
    const held = this.turns.get(turnId);
    if (!held || held.turn.orgId !== scope.orgId || held.turn.sessionId !== sessionId) throw notFound('turn');
    return held;
  }

  private record(turn: TurnRecord, previousStatus: TurnRecord['status'] | null): void {
    const { id: turnId, orgId, sessionId, sequenceNumber, status, statusTimeStamp, createdByUser } = turn;
    this.events.push({ eventId: this.events.length + 1, orgId, sessionId, turnId, sequenceNumber, previousStatus, status, statusTimeStamp, createdByUser });
  }

  private reachable(): void {
    if (this.down) throw new UnavailableError('session store', 'the in-memory store is switched off');
  }
}

/** Blobs in a map; `down` makes every call fail as an unreachable S3 does. */
export class InMemoryBlobStore implements BlobStore {
  readonly objects = new Map<string, { body: string; contentType: string }>();
  down = false;

  async put(key: string, body: string | Buffer, contentType: string): Promise<void> {
    this.reachable();
    this.objects.set(key, { body: body.toString(), contentType });
  }

  async get(key: string): Promise<BlobObject | null> {
    const text = await this.getText(key);
    const object = this.objects.get(key);
    return text === null || !object ? null : { body: Readable.from([text]), contentType: object.contentType, sizeBytes: Buffer.byteLength(text) };
  }

  async getText(key: string): Promise<string | null> {
    this.reachable();
    return this.objects.get(key)?.body ?? null;
  }

  async ping(): Promise<void> {
    this.reachable();
  }

  /** The text stored under the key ending in `suffix`. */
  textEndingWith(suffix: string): string | undefined {
    return [...this.objects].find(([key]) => key.endsWith(suffix))?.[1].body;
  }

  private reachable(): void {
    if (this.down) throw new BlobStoreUnavailableError('the in-memory blob store is switched off');
  }
}

/** What the scripted model does on its next call. */
export type ModelStep =
  | { readonly kind: 'text'; readonly chunks: readonly string[]; readonly usage?: LlmResponse['usage'] }
  | { readonly kind: 'tool_calls'; readonly calls: LlmResponse['toolCalls']; readonly usage?: LlmResponse['usage'] }
  | { readonly kind: 'fail'; readonly error: LlmError }
  /** Streams the chunks, then waits until the call is aborted. */
  | { readonly kind: 'stall'; readonly chunks: readonly string[] };

/** A language model that follows a script and remembers every request. */
export class ScriptedModel implements LanguageModel {
  readonly requests: LlmRequest[] = [];
  private readonly steps: ModelStep[] = [];
  /** Runs once the model has answered, before the orchestrator stores the answer. */
  afterAnswer: (() => void) | null = null;

  enqueue(...steps: ModelStep[]): void {
    this.steps.push(...steps);
  }

  modelFor(requested: string): string {
    return requested;
  }

  payloadOf(request: LlmRequest): Record<string, unknown> {
    return { model: request.model, input: request.input };
  }

  async respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    this.requests.push(request);
    const step = this.steps.shift();
    if (!step) throw new Error('the scripted model has no step left');
    if (step.kind === 'fail') throw step.error;
    const responseId = `resp_${this.requests.length}`;
    const chunks = step.kind === 'tool_calls' ? [] : step.chunks;
    const aborted = () => new LlmError('aborted', 'the model call was aborted');
    for (const chunk of chunks) {
      await new Promise((r) => setImmediate(r));
      if (options.signal.aborted) throw aborted();
      options.onTextDelta(chunk);
    }
    if (step.kind === 'stall') {
      // An abort that came with the last piece has already fired: waiting for its event would hang.
      if (!options.signal.aborted) await new Promise<void>((resolve) => options.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw aborted();
    }
    this.afterAnswer?.();
    return {
      responseId,
      model: request.model,
      text: chunks.join(''),
      toolCalls: step.kind === 'tool_calls' ? step.calls : [],
      usage: step.usage ?? null,
      raw: { id: responseId },
    };
  }
}

export class InMemoryContexts implements ContextLookup {
  constructor(
    readonly agents: AgentContextRecord[] = [],
    readonly conversations: ConversationContextRecord[] = [],
  ) {}

  async agentContextsByIds(orgId: string, ids: readonly string[]): Promise<AgentContextRecord[]> {
    return this.agents.filter((c) => c.orgId === orgId && ids.includes(c.id));
  }

  async conversationContextsByIds(orgId: string, ids: readonly string[]): Promise<ConversationContextRecord[]> {
    return this.conversations.filter((c) => c.orgId === orgId && ids.includes(c.id));
  }
}

export class FixedRetriever implements Retriever {
  constructor(private readonly chunks: RetrievedChunk[] = []) {}
  async retrieve(): Promise<RetrievedChunk[]> {
    return this.chunks;
  }
}

/** Records what the orchestrator streams, per turn. */
export class RecordingOutput implements TurnOutputSink {
  readonly deltas: TurnOutputDelta[] = [];
  readonly ends: TurnRef[] = [];
  append(delta: TurnOutputDelta): void {
    this.deltas.push(delta);
  }
  end(turn: TurnRef): void {
    this.ends.push(turn);
  }
  of(turnId: string): { indexes: number[]; text: string; ends: number } {
    const mine = this.deltas.filter((d) => d.turnId === turnId);
    return { indexes: mine.map((d) => d.index), text: mine.map((d) => d.textDelta).join(''), ends: this.ends.filter((e) => e.turnId === turnId).length };
  }
}

/** Idempotency keys in a map, without expiry (a test's run is shorter than any retention). */
export class InMemoryIdempotencyKeys implements IdempotencyKeyStore {
  readonly keys = new Map<string, { inputHash: string; outcome: string | null }>();
  async claim(scope: { orgId: string; userId: string }, key: string, inputHash: string): Promise<IdempotencyClaim> {
    const id = JSON.stringify([scope.orgId, scope.userId, key]);
    const held = this.keys.get(id);
    if (!held) {
      this.keys.set(id, { inputHash, outcome: null });
      return { kind: 'claimed' };
    }
    if (held.inputHash !== inputHash) {
      throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'this idempotencyKey was already used with a different input', { field: 'idempotencyKey' });
    }
    return held.outcome === null ? { kind: 'running' } : { kind: 'done', outcome: held.outcome };
  }
  async finish(scope: { orgId: string; userId: string }, key: string, outcome: string): Promise<void> {
    const id = JSON.stringify([scope.orgId, scope.userId, key]);
    this.keys.set(id, { inputHash: this.keys.get(id)?.inputHash ?? '', outcome });
  }
  async release(scope: { orgId: string; userId: string }, key: string): Promise<void> {
    this.keys.delete(JSON.stringify([scope.orgId, scope.userId, key]));
  }
  async purgeExpired(): Promise<number> {
    return 0;
  }
}

/** Keeps every log line, so a test can tell an expected failure from one that was logged as unexpected. */
export class RecordingLogger implements Logger {
  readonly lines: { level: string; details: unknown; message?: string }[] = [];
  readonly error = this.at('error');
  readonly warn = this.at('warn');
  readonly info = this.at('info');
  readonly debug = this.at('debug');
  private at(level: string) {
    return (details: object | string, message?: string) => void this.lines.push({ level, details, ...(message === undefined ? {} : { message }) });
  }
}

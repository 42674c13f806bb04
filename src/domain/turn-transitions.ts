import type { Caller, EntityHeader } from './caller';
import { conflict, DomainError, forbidden, notFound } from './errors';
import type { SessionRecord } from './session';
import { withUsage } from './session-usage';
import { summarize } from './text';
import { NO_REQUEST_METADATA } from './request-metadata';
import { closeOpenCalls } from './tool-calls';
import type {
  ChunkRef,
  NewTurn,
  TurnCancellation,
  TurnChainRestart,
  TurnCompletion,
  TurnFailure,
  TurnPartialAnswer,
  TurnRecord,
  TurnToolPause,
  TurnWork,
} from './turn';
import { assertTransition } from './turn-status';
import type { TurnUsage } from './usage';
import { requireText } from './validation';
import { canCancelTurn } from './visibility';

/**
 * DD-002's rules for one turn, as pure functions over domain records. The session store
 * applies them inside its transactions (and persists what they return); nothing else may
 * change a turn. Each refuses with CONFLICT what the spec forbids: a terminal turn is never
 * changed again.
 */

/** How a PENDING turn ends (DD-002B, DD-002C and the CANCELLED extension). */
export type TurnTransition =
  | { readonly to: 'COMPLETED'; readonly completion: TurnCompletion }
  | { readonly to: 'FAILED'; readonly failure: TurnFailure }
  | { readonly to: 'CANCELLED'; readonly cancellation: TurnCancellation };

/** A new turn's input, checked: refused before anything is read or written. */
export interface CheckedNewTurn extends NewTurn {
  readonly mode: string;
}

export function checkNewTurn(input: NewTurn): CheckedNewTurn {
  return { ...input, instructionSummary: summarize(input.instructionSummary), mode: requireText('mode', input.mode ?? 'ask', 64) };
}

/** Why `session` may not take a new turn (DD-002): it is deleted, or (when asked) still working on its last one. Null: it may. */
export function turnRefusal(
  session: Pick<SessionRecord, 'id' | 'isDeleted' | 'lastTurnStatus'>,
  options: { readonly rejectIfBusy?: boolean },
): DomainError | null {
  if (session.isDeleted) return conflict('the session is deleted');
  if (options.rejectIfBusy && session.lastTurnStatus === 'PENDING') {
    return new DomainError('SESSION_BUSY', 'the session is still working on its last turn', { sessionId: session.id });
  }
  return null;
}

export function assertAcceptsTurn(
  session: Pick<SessionRecord, 'id' | 'isDeleted' | 'lastTurnStatus'>,
  options: { readonly rejectIfBusy?: boolean },
): void {
  const refusal = turnRefusal(session, options);
  if (refusal) throw refusal;
}

/** DD-002A: a new PENDING turn, numbered after the session's last one; its status timestamp is its creation. */
export function openTurn(
  input: CheckedNewTurn,
  at: {
    readonly id: string;
    readonly session: { readonly id: string; readonly orgId: string; readonly turnCount: number };
    readonly author: EntityHeader;
    readonly now: Date;
  },
): TurnRecord {
  return {
    id: at.id,
    sessionId: at.session.id,
    orgId: at.session.orgId,
    sequenceNumber: at.session.turnCount + 1,
    createdByUser: at.author,
    creationDate: at.now,
    status: 'PENDING',
    statusTimeStamp: at.now,
    mode: input.mode,
    conversationId: input.conversationId ?? null,
    openAIModel: input.openAIModel ?? null,
    openAIResponseId: null,
    previousOpenAIResponseId: input.previousOpenAIResponseId ?? null,
    openAIResponseReceivedDate: null,
    openAIChainExpiresDate: null,
    instructionSummary: input.instructionSummary,
    fullInstructionUrl: input.fullInstructionUrl ?? null,
    agentAnswerSummary: null,
    fullAgentAnswerUrl: null,
    openAIRequestPayloadUrl: null,
    openAIResponsePayloadUrl: null,
    chunkRefs: [...(input.chunkRefs ?? [])],
    activeFileRefs: [...(input.activeFileRefs ?? [])],
    pendingToolCalls: [],
    toolCalls: [],
    files: [],
    answeredByModel: null,
    warnings: [...(input.warnings ?? [])],
    errors: [],
    usage: null,
    openAIChainRestartReason: input.openAIChainRestartReason ?? null,
    requestMetadata: input.requestMetadata ?? NO_REQUEST_METADATA,
  };
}

/**
 * The turn after `change`; null when nothing changes (cancelling a CANCELLED turn, which a
 * racing second cancel does). Any other change of a terminal turn is CONFLICT.
 */
export function applyTransition(turn: TurnRecord, change: TurnTransition, now: Date): TurnRecord | null {
  if (change.to === 'CANCELLED' && turn.status === 'CANCELLED') return null;
  assertTransition(turn.status, change.to);
  const work = change.to === 'COMPLETED' ? change.completion : change.to === 'FAILED' ? change.failure : change.cancellation;
  const base: TurnRecord = { ...withWork(turn, work), status: change.to, pendingToolCalls: [] };
  const closed: TurnRecord = { ...base, toolCalls: closeOpenCalls(base.toolCalls) };
  switch (change.to) {
    case 'COMPLETED': {
      const c = change.completion;
      return withUsage(
        {
          ...closed,
          statusTimeStamp: c.openAIResponseReceivedDate,
          openAIResponseId: c.openAIResponseId,
          openAIResponseReceivedDate: c.openAIResponseReceivedDate,
          openAIChainExpiresDate: c.openAIChainExpiresDate ?? null,
          agentAnswerSummary: summarize(c.agentAnswerSummary),
          fullAgentAnswerUrl: c.fullAgentAnswerUrl,
          openAIRequestPayloadUrl: c.openAIRequestPayloadUrl ?? turn.openAIRequestPayloadUrl,
          openAIResponsePayloadUrl: c.openAIResponsePayloadUrl ?? turn.openAIResponsePayloadUrl,
          warnings: [...turn.warnings, ...(c.warnings ?? [])],
        },
        c.usage,
      );
    }
    case 'FAILED': {
      const f = change.failure;
      const observed = f.openAIResponseReceivedDate ?? now;
      return withUsage(
        {
          ...closed,
          statusTimeStamp: observed,
          openAIResponseId: f.openAIResponseId ?? turn.openAIResponseId,
          openAIResponseReceivedDate: observed,
          openAIChainExpiresDate: f.openAIChainExpiresDate ?? null,
          openAIRequestPayloadUrl: f.openAIRequestPayloadUrl ?? turn.openAIRequestPayloadUrl,
          openAIResponsePayloadUrl: f.openAIResponsePayloadUrl ?? turn.openAIResponsePayloadUrl,
          errors: [...turn.errors, ...f.errors],
          warnings: [...turn.warnings, ...(f.warnings ?? [])],
          agentAnswerSummary: null,
          fullAgentAnswerUrl: null,
        },
        f.usage,
      );
    }
    case 'CANCELLED': {
      const c = change.cancellation;
      return withUsage(
        {
          ...closed,
          statusTimeStamp: now,
          agentAnswerSummary: c.agentAnswerSummary == null ? null : summarize(c.agentAnswerSummary),
          fullAgentAnswerUrl: c.fullAgentAnswerUrl ?? null,
          warnings: [...turn.warnings, c.reason],
        },
        c.usage,
      );
    }
  }
}

/** AGN-033: the PENDING turn now waits for the client to run these tools; its status does not change. */
export function pauseForToolCalls(turn: TurnRecord, pause: TurnToolPause): TurnRecord {
  assertPending(turn);
  return withUsage(
    {
      ...withWork(turn, pause),
      pendingToolCalls: [...pause.toolCalls],
      openAIResponseId: pause.openAIResponseId,
      openAIChainExpiresDate: pause.openAIChainExpiresDate,
      openAIRequestPayloadUrl: pause.openAIRequestPayloadUrl,
      openAIResponsePayloadUrl: pause.openAIResponsePayloadUrl,
    },
    pause.usage,
  );
}

/**
 * The client's results for exactly the tool calls the turn waits on take it back into work.
 * CONFLICT when it no longer waits on them (answered already, finished) or its tool-result
 * deadline (`waitUntil`, null when none) has passed.
 */
export function resumeWithToolResults(turn: TurnRecord, toolCallIds: readonly string[], waitUntil: Date | null, now: Date): TurnRecord {
  const ids = { sessionId: turn.sessionId, turnId: turn.id };
  const waiting = turn.pendingToolCalls.map((c) => c.toolCallId);
  const same = waiting.length === toolCallIds.length && waiting.every((id, i) => id === toolCallIds[i]);
  if (turn.status !== 'PENDING' || !same || waiting.length === 0) {
    throw conflict('the turn is no longer waiting for these tool results', ids);
  }
  if (waitUntil && waitUntil.getTime() <= now.getTime()) throw conflict('the turn stopped waiting for tool results', ids);
  return { ...turn, pendingToolCalls: [] };
}

/** Retrieval ran once the turn existed: its chunks join the PENDING turn, those already on it skipped. */
export function addChunkRefs(turn: TurnRecord, chunkRefs: readonly ChunkRef[]): { turn: TurnRecord; added: ChunkRef[] } {
  assertPending(turn);
  const known = new Set(turn.chunkRefs.map((c) => c.chunkId));
  const fresh = new Map<string, ChunkRef>();
  for (const c of chunkRefs) if (!known.has(c.chunkId)) fresh.set(c.chunkId, c);
  const added = [...fresh.values()];
  return { turn: added.length === 0 ? turn : { ...turn, chunkRefs: [...turn.chunkRefs, ...added] }, added };
}

/**
 * Who may stop a turn, and which: its author, the session's owner or an admin, a turn that
 * is PENDING (returned) or already CANCELLED (returned: cancelling again is a no-op). A turn
 * or session the caller cannot read is NOT_FOUND; a COMPLETED or FAILED turn is CONFLICT.
 */
export function checkCancel(caller: Caller, session: SessionRecord | null, turn: TurnRecord | null): TurnRecord {
  if (!turn || !session) throw notFound('turn');
  const facts = { orgId: session.ownerOrganization.id, ownerUserId: session.ownerUser.id };
  if (!canCancelTurn(caller, facts, turn)) throw forbidden('only the turn author, the session owner or an admin may cancel a turn');
  if (turn.status === 'COMPLETED' || turn.status === 'FAILED') {
    throw conflict(`turn is already ${turn.status.toLowerCase()}; it cannot be cancelled`);
  }
  return turn;
}

/** Issue 10: the provider lost the chain; the PENDING turn retries on a new chain of its own. */
export function restartTurnChain(turn: TurnRecord, restart: TurnChainRestart): TurnRecord {
  assertPending(turn);
  return {
    ...turn,
    conversationId: turn.id,
    previousOpenAIResponseId: null,
    openAIChainRestartReason: restart.reason,
    activeFileRefs: [...restart.activeFileRefs],
    chunkRefs: [...restart.chunkRefs],
    requestMetadata: restart.requestMetadata,
    warnings: [...turn.warnings, ...restart.warnings],
  };
}

/**
 * A turn cancelled from another instance: the instance that ran it keeps the partial answer
 * once it notices. Null when there is nothing to change (the turn already has an answer URL).
 */
export function keepPartialAnswer(turn: TurnRecord, partial: TurnPartialAnswer): TurnRecord | null {
  if (turn.status !== 'CANCELLED') throw conflict(`turn is ${turn.status.toLowerCase()}, not cancelled`);
  const answer = partial.fullAgentAnswerUrl !== null && !turn.fullAgentAnswerUrl;
  // The cancel settled the turn with its earlier rounds' usage; the running instance knows the whole.
  const usage = partial.usage && !sameUsage(turn.usage, partial.usage) ? partial.usage : null;
  if (!answer && !usage) return null;
  const kept = answer
    ? { ...turn, fullAgentAnswerUrl: partial.fullAgentAnswerUrl, agentAnswerSummary: summarize(partial.agentAnswerSummary ?? '') }
    : turn;
  return withUsage(kept, usage);
}

const sameUsage = (a: TurnUsage | null, b: TurnUsage): boolean =>
  a !== null &&
  a.inputTokens === b.inputTokens &&
  a.outputTokens === b.outputTokens &&
  (a.cachedInputTokens ?? 0) === (b.cachedInputTokens ?? 0) &&
  a.estimatedCostUsd === b.estimatedCostUsd &&
  a.isEstimated === b.isEstimated;

function assertPending(turn: TurnRecord): void {
  if (turn.status !== 'PENDING') throw conflict(`turn is already ${turn.status.toLowerCase()}`);
}

/** The turn with a round's tool calls, files and answering model; what the round leaves out stays. */
function withWork(turn: TurnRecord, work: TurnWork): TurnRecord {
  return {
    ...turn,
    toolCalls: work.toolCallRecords ? [...work.toolCallRecords] : turn.toolCalls,
    files: work.files ? [...work.files] : turn.files,
    answeredByModel: work.answeredByModel ?? turn.answeredByModel,
  };
}

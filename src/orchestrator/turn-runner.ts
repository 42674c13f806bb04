import { setTimeout as delay } from 'node:timers/promises';
import type { BlobStore } from '../blobs/blob-store.port';
import { TURN_BLOBS } from '../domain/blob-keys';
import type { Caller } from '../domain/caller';
import { DomainError, isDomainError, isUnavailable, type ErrorCode, type ErrorDetails } from '../domain/errors';
import { finalResponse, toolContinuation, type ExecuteResponse } from '../domain/execute-response';
import type { FileRef } from '../domain/file-ref';
import type { PricingTable } from '../domain/pricing';
import type { ToolCallRecord } from '../domain/tool-call-record';
import { assertClientToolRounds, ClientToolRoundsExceeded, toolCallEvent } from '../domain/tool-calls';
import type { TurnFailure } from '../domain/turn';
import type { TurnUsage } from '../domain/usage';
import type { TurnOutputSink, TurnRef } from '../events/turn-output.port';
import { LlmError, type LanguageModel, type LlmRequest, type LlmResponse } from '../llm/llm.port';
import type { Logger } from '../logger.port';
import type { TurnStore } from '../sessions/session-store.port';
import type { InFlightTurn, InFlightTurns } from './in-flight';
import type { PlannedChainRestart } from './instruction-planner';
import type { ServerToolLoop } from './server-tools/tool-loop';
import { TurnBlobs } from './turn-blobs';
import { TurnTally } from './turn-tally';

/** One provider round of a PENDING turn: everything the runner needs, already decided. */
export interface TurnRun {
  readonly caller: Caller;
  /** The request that started this round (null when none is known), for its logs. */
  readonly requestId: string | null;
  readonly sessionId: string;
  readonly turnId: string;
  readonly mode: string;
  /** The model recorded on the turn and priced. */
  readonly model: string;
  readonly request: LlmRequest;
  /** A continuation round: payload logs and the output index carry on from earlier rounds. */
  readonly continued: boolean;
  readonly firstDeltaIndex: number;
  /** Usage of the turn's earlier rounds. */
  readonly priorUsage: TurnUsage | null;
  /** Tool calls and files of the turn's earlier rounds; `answered` are client calls this round brings results for. */
  readonly earlier?: {
    readonly toolCalls: readonly ToolCallRecord[];
    readonly files: readonly FileRef[];
    readonly answered: readonly ToolCallRecord[];
  };
  /** When this turn's provider chain stops being reliable, given when the response arrived. */
  readonly chainExpiry: (receivedAt: Date) => Date;
  /** Issue 10: the round again on a new, preloaded chain, if the provider lost this one (once; absent on a new chain). */
  readonly restartChain?: (() => Promise<PlannedChainRestart>) | null;
}

export interface TurnRunnerDeps {
  readonly sessions: TurnStore;
  readonly blobs: BlobStore;
  readonly llm: LanguageModel;
  readonly toolLoop: ServerToolLoop;
  readonly output: TurnOutputSink;
  readonly inFlight: InFlightTurns;
  readonly pricing: PricingTable;
  readonly toolResultTimeoutSeconds: number;
  readonly maxClientToolRounds: number;
  readonly logger: Logger;
  readonly now: () => Date;
}

/** Longest pause between two attempts to store a round's outcome while the store is away. */
const MAX_SETTLE_WAIT_MS = 5_000;

/**
 * Runs one provider round of a PENDING turn and settles it: COMPLETED with the answer
 * (DD-002B), paused for client tools (AGN-033), FAILED with a clear error (DD-002C), or
 * CANCELLED with the partial answer kept. Streams every delta to the output sink and ends
 * the stream however the round ends. An outcome the store cannot take right now is kept
 * and written once it is back (see `settle`), so a database outage does not lose answers.
 */
export class TurnRunner {
  constructor(private readonly deps: TurnRunnerDeps) {}

  async run(run: TurnRun): Promise<ExecuteResponse> {
    const flight = this.deps.inFlight.register(run.caller.orgId, run.sessionId, run.turnId, run.firstDeltaIndex);
    const blobs = new TurnBlobs(this.deps.blobs, run.caller.orgId, run.sessionId, run.turnId);
    const earlier = { usage: run.priorUsage, toolCalls: run.earlier?.toolCalls ?? [], files: run.earlier?.files ?? [] };
    const tally = new TurnTally(this.deps.pricing, run.model, earlier, run.firstDeltaIndex);
    // The round as it stands: a chain restart replaces its request and chain expiry.
    let round = run;
    try {
      const result = await this.deps.toolLoop.respond(
        {
          request: run.request,
          continued: run.continued,
          tool: { caller: run.caller, sessionId: run.sessionId, turnId: run.turnId },
          answered: run.earlier?.answered ?? [],
          onTextDelta: (text) => this.onDelta(run, flight, text),
          onToolCall: (record) => this.onToolCall(run, flight, record),
          recover: async (e) => {
            const restarted = await this.restartChain(round, flight, blobs, tally, e);
            if (restarted) round = restarted;
            return restarted?.request ?? null;
          },
        },
        flight,
        blobs,
        tally,
      );
      return result.toolCalls.length > 0 ? await this.pause(round, flight, result, tally) : await this.complete(round, flight, blobs, result, tally);
    } catch (e) {
      throw await this.failed(round, flight, blobs, e, tally);
    } finally {
      if (!flight.settling) this.deps.inFlight.release(run.turnId);
      await this.answerLateCancel(run, flight);
      this.deps.output.end(this.refOf(run));
    }
  }

  /**
   * Issue 10: when the provider no longer knows the previous response, the turn records its
   * new chain and retries once on it, preloaded from stored history; the failed attempt stays
   * in the payload logs. Returns the round to retry, or null when this failure is final.
   */
  private async restartChain(run: TurnRun, flight: InFlightTurn, blobs: TurnBlobs, tally: TurnTally, e: unknown): Promise<TurnRun | null> {
    // Only before any text of this run reached clients (a retry would repeat it); tool call items may have.
    if (!(e instanceof LlmError && e.kind === 'chain_lost' && run.restartChain && flight.text.length === 0)) return null;
    const restart = await run.restartChain();
    tally.responseUrl = await blobs.appendResponse({ streamedDeltas: tally.takeStreamed(flight.deltas), error: e.message }, run.continued);
    await this.deps.sessions.restartTurnChain(run.caller, run.sessionId, run.turnId, { reason: 'LOST_BY_PROVIDER', ...restart });
    return { ...run, request: restart.request, chainExpiry: restart.chainExpiry, restartChain: null, continued: true };
  }

  private onDelta(run: TurnRun, flight: InFlightTurn, text: string): void {
    if (text.length === 0) return;
    flight.text += text;
    this.deps.output.append({ ...this.refOf(run), index: flight.deltas++, textDelta: text });
  }

  /** Spec 004 section 7, live: a tool call in the turn's output stream, between its text. */
  private onToolCall(run: TurnRun, flight: InFlightTurn, record: ToolCallRecord): void {
    this.deps.output.append({ ...this.refOf(run), index: flight.deltas++, textDelta: '', toolCall: toolCallEvent(record) });
  }

  private async complete(
    run: TurnRun,
    flight: InFlightTurn,
    blobs: TurnBlobs,
    result: LlmResponse,
    tally: TurnTally,
  ): Promise<ExecuteResponse> {
    const [answerUrl] = await Promise.all([blobs.put(TURN_BLOBS.answer, result.text), tally.responseLogged()]);
    const { usage, ...work } = tally.work();
    const receivedAt = this.deps.now();
    const turn = await this.settle(run, flight, () => this.deps.sessions.completeTurn(run.caller, run.sessionId, run.turnId, {
      agentAnswerSummary: result.text,
      fullAgentAnswerUrl: answerUrl,
      openAIResponseId: result.responseId,
      openAIResponseReceivedDate: receivedAt,
      openAIChainExpiresDate: run.chainExpiry(receivedAt),
      openAIRequestPayloadUrl: tally.requestUrl,
      openAIResponsePayloadUrl: tally.responseUrl,
      warnings: tally.warnings,
      usage,
      ...work,
    }));
    return finalResponse(
      { sessionId: run.sessionId, turnId: run.turnId, mode: run.mode },
      { text: result.text, warnings: turn.warnings, usage, files: tally.files, toolResults: tally.serverResults },
    );
  }

  private async pause(run: TurnRun, flight: InFlightTurn, result: LlmResponse, tally: TurnTally): Promise<ExecuteResponse> {
    await tally.responseLogged();
    const declared = new Set(run.request.tools.map((t) => t.name));
    const unknown = result.toolCalls.find((c) => !declared.has(c.name));
    if (unknown) {
      throw new LlmError('failed', `the model called a tool the conversation does not declare: ${unknown.name.slice(0, 64)}`, {
        responseId: result.responseId,
      });
    }
    assertClientToolRounds(tally.records, this.deps.maxClientToolRounds, result.responseId);
    const receivedAt = this.deps.now();
    const { usage, ...work } = tally.work();
    await this.settle(run, flight, () =>
      this.deps.sessions.pauseForToolCalls(run.caller, run.sessionId, run.turnId, {
        toolCalls: result.toolCalls,
        openAIResponseId: result.responseId,
        openAIChainExpiresDate: run.chainExpiry(receivedAt),
        waitUntil: new Date(receivedAt.getTime() + this.deps.toolResultTimeoutSeconds * 1000),
        usage,
        openAIRequestPayloadUrl: tally.requestUrl,
        openAIResponsePayloadUrl: tally.responseUrl,
        ...work,
      }),
    );
    return toolContinuation({ sessionId: run.sessionId, turnId: run.turnId, mode: run.mode }, result.toolCalls, result.text);
  }

  /** Settles the turn after anything went wrong and returns the error the caller receives. */
  private async failed(run: TurnRun, flight: InFlightTurn, blobs: TurnBlobs, e: unknown, tally: TurnTally): Promise<unknown> {
    // The outcome is known and will be stored once the store is back (settle).
    if (flight.settling) return e;
    // A response log still being written lands first, so the failure is appended after it.
    await tally.responseLogged().catch(() => undefined);
    // Spec 003: tokens spent on the round that did not finish count too.
    const provider = e instanceof LlmError ? e.provider : {};
    tally.roundAbandoned(flight.text, provider.usage ?? null, provider.model ?? null);
    if (flight.reason === 'cancel') return this.cancelled(run, flight, blobs, tally);
    if (flight.reason === 'lost' || (isDomainError(e) && e.code === 'CONFLICT')) return this.lost(run, flight, blobs, tally);
    if (flight.reason === 'shutdown') {
      return this.fail(run, flight, tally, 'SERVICE_UNAVAILABLE', 'interrupted: the gateway shut down before the model finished answering');
    }
    if (e instanceof LlmError) {
      // DD-002C: the failed turn keeps the raw payloads, the error included.
      const logged = run.continued || tally.responseUrl !== null;
      const responseUrl = await blobs
        .appendResponse({ streamedDeltas: tally.takeStreamed(flight.deltas), error: e.message }, logged)
        .catch(() => null);
      // A lost chain gets here only when it cannot be retried (lost again, or text already streamed): the next instruction recovers.
      const message = e.kind === 'chain_lost' ? `${e.message}; send the instruction again to continue in a new conversation` : e.message;
      return this.fail(run, flight, tally, e.code, message, {
        openAIResponseId: e.provider.responseId ?? null,
        openAIRequestPayloadUrl: tally.requestUrl,
        openAIResponsePayloadUrl: responseUrl,
      });
    }
    if (e instanceof ClientToolRoundsExceeded) {
      // The turn keeps the usage of every round it ran (the tally holds them) and the calls it was refused (ABANDONED).
      const payloads = { openAIResponseId: e.responseId, openAIRequestPayloadUrl: tally.requestUrl, openAIResponsePayloadUrl: tally.responseUrl };
      return this.fail(run, flight, tally, e.code, e.message, payloads, { limit: e.limit });
    }
    if (isUnavailable(e, 'blob store')) {
      return this.fail(run, flight, tally, 'SERVICE_UNAVAILABLE', 'the blob store is unavailable, so the turn could not be stored');
    }
    this.deps.logger.error({ err: e, sessionId: run.sessionId, turnId: run.turnId, requestId: run.requestId }, 'turn failed unexpectedly');
    await this.fail(run, flight, tally, 'LLM_FAILED', 'the gateway failed while running this turn');
    return e;
  }

  private async fail(
    run: TurnRun,
    flight: InFlightTurn,
    tally: TurnTally,
    code: ErrorCode,
    message: string,
    payloads: Omit<TurnFailure, 'errors'> = {},
    details: ErrorDetails = {},
  ): Promise<DomainError> {
    const failure: TurnFailure = { ...tally.work(), warnings: tally.warnings, ...payloads, errors: [message] };
    try {
      await this.settle(run, flight, () => this.deps.sessions.failTurn(run.caller, run.sessionId, run.turnId, failure));
    } catch (e) {
      if (!flight.settling) this.deps.logger.warn({ err: e, turnId: run.turnId }, 'could not record the turn failure; its lease will expire');
    }
    return new DomainError(code, message, { ...this.idsOf(run), ...details });
  }

  /**
   * Stores how the round ended. While the store cannot be reached the caller hears
   * SERVICE_UNAVAILABLE (with the turn's ids) at once, and the write is retried in the
   * background until the store is back: the turn stays registered here meanwhile, so its
   * lease is renewed as soon as the database answers and no sweeper takes it for dead.
   * Shutdown or a lost lease stop the retries; the lease then decides.
   */
  private async settle<T>(run: TurnRun, flight: InFlightTurn, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (!isUnavailable(e, 'session store')) throw e;
      const stop = new AbortController();
      flight.settling = stop;
      void this.settleLater(run, write, stop.signal);
      throw new DomainError('SERVICE_UNAVAILABLE', 'the session store is unavailable; the turn is stored as soon as it is back', this.idsOf(run));
    }
  }

  private async settleLater(run: TurnRun, write: () => Promise<unknown>, stop: AbortSignal): Promise<void> {
    try {
      for (let wait = 250; !stop.aborted; wait = Math.min(wait * 2, MAX_SETTLE_WAIT_MS)) {
        await delay(wait, undefined, { signal: stop }).catch(() => undefined);
        if (stop.aborted) return;
        try {
          await write();
          this.deps.logger.info({ turnId: run.turnId }, 'stored a turn outcome kept while the session store was away');
          return;
        } catch (e) {
          if (!isUnavailable(e, 'session store')) {
            // Settled meanwhile (cancelled by a user, or swept).
            this.deps.logger.warn({ err: e, turnId: run.turnId }, 'a kept turn outcome could not be stored');
            return;
          }
        }
      }
    } finally {
      this.deps.inFlight.release(run.turnId);
    }
  }

  /** cancelTurn on this instance: keep the partial answer, then let the store cancel the turn. */
  private async cancelled(run: TurnRun, flight: InFlightTurn, blobs: TurnBlobs, tally: TurnTally): Promise<DomainError> {
    const caller = flight.cancelledBy ?? run.caller;
    try {
      const partial = flight.text;
      const url = partial.length > 0 ? await blobs.put(TURN_BLOBS.answer, partial) : null;
      const turn = await this.deps.sessions.cancelTurn(caller, run.sessionId, run.turnId, {
        ...tally.work(),
        reason: `Cancelled by ${caller.userName}.`,
        fullAgentAnswerUrl: url,
        agentAnswerSummary: partial.length > 0 ? partial : null,
      });
      flight.settleCancel(turn);
    } catch (e) {
      flight.settleCancel(e instanceof Error ? e : new Error(String(e)));
    }
    return new DomainError('CANCELLED', 'the turn was cancelled', this.idsOf(run));
  }

  /** The turn left this instance's hands (cancelled elsewhere, or swept): report what happened. */
  private async lost(run: TurnRun, flight: InFlightTurn, blobs: TurnBlobs, tally: TurnTally): Promise<DomainError> {
    const turn = await this.deps.sessions.getTurn(run.caller, run.sessionId, run.turnId).catch(() => null);
    if (turn?.status === 'CANCELLED') {
      // Cancelled from another instance: the partial answer and what the round spent are kept.
      await this.keepPartialAnswer(run, blobs, flight.text, tally);
      return new DomainError('CANCELLED', 'the turn was cancelled', this.idsOf(run));
    }
    if (turn?.status === 'PENDING') return this.fail(run, flight, tally, 'LLM_FAILED', 'interrupted: the turn lost its lease');
    const why = turn?.errors.join('; ') || `the turn is ${turn?.status.toLowerCase() ?? 'gone'}`;
    return new DomainError('CONFLICT', why, this.idsOf(run));
  }

  private async keepPartialAnswer(run: TurnRun, blobs: TurnBlobs, partial: string, tally: TurnTally): Promise<void> {
    try {
      const url = partial.length > 0 ? await blobs.put(TURN_BLOBS.answer, partial) : null;
      await this.deps.sessions.keepPartialAnswer(run.caller, run.sessionId, run.turnId, {
        fullAgentAnswerUrl: url,
        agentAnswerSummary: url ? partial : null,
        usage: tally.work().usage,
      });
    } catch (e) {
      this.deps.logger.warn({ err: e, turnId: run.turnId }, 'could not keep the partial answer of a turn cancelled elsewhere');
    }
  }

  /** A cancel that arrived after the provider answered: cancel a paused turn, refuse a finished one. */
  private async answerLateCancel(run: TurnRun, flight: InFlightTurn): Promise<void> {
    const caller = flight.cancelledBy;
    if (!caller || !flight.cancelPending) return;
    try {
      flight.settleCancel(await this.deps.sessions.cancelTurn(caller, run.sessionId, run.turnId));
    } catch (e) {
      flight.settleCancel(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private refOf(run: TurnRun): TurnRef {
    return { orgId: run.caller.orgId, sessionId: run.sessionId, turnId: run.turnId };
  }

  private idsOf(run: TurnRun): { sessionId: string; turnId: string } {
    return { sessionId: run.sessionId, turnId: run.turnId };
  }
}


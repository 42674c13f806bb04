import { randomUUID } from 'node:crypto';
import { TURN_BLOBS } from '../domain/blob-keys';
import type { Caller } from '../domain/caller';
import { conflict, DomainError, forbidden, notFound } from '../domain/errors';
import { answerClientCalls, takePendingOutputs } from '../domain/tool-calls';
import { matchToolResults, toolOutputText } from '../domain/tool-results';
import type { NewTurn, TurnRecord } from '../domain/turn';
import type { TurnOutputSink } from '../events/turn-output.port';
import type { IdempotencyKeyStore } from '../idempotency/idempotency.port';
import type { LlmToolOutput } from '../llm/llm.port';
import type { TurnLeases, TurnStore } from '../sessions/session-store.port';
import { restartContinuation } from './continuation-restart';
import { InFlightTurns } from './in-flight';
import { InstructionPlanner, type PlannedInstruction, type PlannerDeps } from './instruction-planner';
import { LeaseSweeper } from './lease-sweeper';
import { llmRequestOf } from './packaging';
import type { InstructionRequest, OrchestratorRequest, RerunRequest, StartedTurn, ToolResultsRequest } from './request';
import { builtInToolLoop } from './server-tools/built-in';
import { SessionFiles, TurnBlobs } from './turn-blobs';
import { TurnRunner } from './turn-runner';

/** Everything the turn pipeline works with: ports only, picked by the composition root. */
export interface OrchestratorDeps extends PlannerDeps {
  readonly sessions: TurnStore;
  readonly leases: TurnLeases;
  readonly output: TurnOutputSink;
  readonly idempotencyKeys: IdempotencyKeyStore;
  /** This gateway instance, as lease owner. */
  readonly instanceId: string;
}

/**
 * The turn pipeline (DD-001, DD-002, spec 001): takes canonical requests only (it never
 * sees a client kind), adds the PENDING turn once the instruction is stored, runs the
 * provider call in the background of the caller's choosing, and settles the turn.
 */
export class Orchestrator {
  private readonly planner: InstructionPlanner;
  private readonly runner: TurnRunner;
  private readonly inFlight: InFlightTurns;
  private draining = false;
  private readonly sweeper: LeaseSweeper;

  constructor(private readonly deps: OrchestratorDeps) {
    const { config } = deps;
    this.planner = new InstructionPlanner(deps);
    this.inFlight = new InFlightTurns({
      leases: deps.leases,
      owner: deps.instanceId,
      leaseMs: config.turnLeaseSeconds * 1000,
      logger: deps.logger,
      now: deps.now,
    });
    this.runner = new TurnRunner({
      ...deps,
      toolLoop: builtInToolLoop({ ...deps, maxRounds: config.maxServerToolRounds }),
      inFlight: this.inFlight,
      pricing: config.modelPricing,
      toolResultTimeoutSeconds: config.toolResultTimeoutSeconds,
      maxClientToolRounds: config.maxClientToolRounds,
    });
    this.sweeper = new LeaseSweeper({
      ...deps,
      toolResultTimeoutSeconds: config.toolResultTimeoutSeconds,
      workingOn: (turnId) => this.inFlight.holds(turnId),
    });
  }

  /**
   * Resolves once the turn is PENDING; `outcome` settles when the round ends. `requestId`
   * is the request that started it, for the logs of a round that ends unexpectedly.
   */
  async start(request: OrchestratorRequest, requestId: string | null = null): Promise<StartedTurn> {
    const started = await this.dispatch(request, requestId);
    // A caller that returns early (executeAsync) does not await the outcome; it must not go unhandled.
    started.outcome.catch(() => undefined);
    return started;
  }

  private dispatch(request: OrchestratorRequest, requestId: string | null): Promise<StartedTurn> {
    // Nothing was written: a retry (with the same idempotencyKey) lands once, on another instance.
    if (this.draining) return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'this gateway instance is shutting down; try again'));
    switch (request.kind) {
      case 'instruction':
        return this.startInstruction(request, requestId);
      case 'tool_results':
        return this.continueWithToolResults(request, requestId);
      case 'rerun':
        return this.rerun(request, requestId);
    }
  }

  /**
   * Stops a PENDING turn (the store's cancel rule decides who may). Running here: the runner
   * aborts the provider call, keeps the partial answer and cancels. Otherwise (paused for
   * tools, running elsewhere, or dead) the store cancels it, and the instance running it
   * notices at its next lease renewal.
   */
  async cancel(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord> {
    const turn = await this.deps.sessions.turnToCancel(caller, sessionId, turnId);
    if (turn.status === 'CANCELLED') return turn;
    const running = this.inFlight.find(caller.orgId, sessionId, turnId);
    if (running) return running.requestCancel(caller);
    return this.deps.sessions.cancelTurn(caller, sessionId, turnId, { reason: `Cancelled by ${caller.userName}.` });
  }

  /** Lease renewal and the sweeper; every live instance runs both (tests that count statements may leave the sweeper off). */
  startBackgroundWork(options: { readonly sweeper: boolean } = { sweeper: true }): void {
    this.inFlight.start();
    if (!options.sweeper) return;
    const leaseMs = this.deps.config.turnLeaseSeconds * 1000;
    this.sweeper.start(Math.min(30_000, Math.max(250, Math.floor(leaseMs / 4))));
  }

  /** One sweep now (tests, and a first pass at start-up). */
  sweepExpiredTurns(): Promise<number> {
    return this.sweeper.sweep();
  }

  /** How many provider calls run in this instance right now. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Shutdown, first step: no turn starts here any more (SERVICE_UNAVAILABLE, which a client
   * retries on another instance), and the turns running here may finish within `timeoutMs`
   * while their leases are still renewed. Resolves when none is left, or at the deadline.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    await this.inFlight.drained(timeoutMs);
  }

  /**
   * Shutdown: stop renewing, abort what still runs here (its turns fail as interrupted),
   * and expire any lease left so another instance's sweeper settles the turn at once.
   */
  async releaseLeases(graceMs = 5000): Promise<void> {
    this.sweeper.stop();
    this.inFlight.stop();
    this.inFlight.abortAll('shutdown');
    await this.inFlight.drained(graceMs);
    await this.deps.leases.releaseLeases(this.deps.instanceId);
  }

  /**
   * The planner decides (and refuses) first; only then is anything written: the inputs, a new
   * session if the request has none, and the PENDING turn.
   */
  private async startInstruction(req: InstructionRequest, requestId: string | null): Promise<StartedTurn> {
    const plan = await this.planner.plan(req);
    const turnId = randomUUID();
    const instructionUrl = await this.storeInputs(req, plan, turnId);
    const first: NewTurn = {
      id: turnId,
      instructionSummary: req.instruction,
      mode: plan.mode,
      conversationId: plan.conversationId ?? turnId,
      openAIModel: plan.model,
      previousOpenAIResponseId: plan.previousResponseId,
      fullInstructionUrl: instructionUrl,
      chunkRefs: plan.chunkRefs,
      activeFileRefs: plan.activeFileRefs,
      warnings: plan.warnings,
      openAIChainRestartReason: plan.openAIChainRestartReason,
      requestMetadata: plan.requestMetadata,
    };
    const options = { rejectIfBusy: true, lease: { owner: this.deps.instanceId, expiresAt: this.inFlight.leaseUntil() } };
    // A new session and its first turn are one change: nothing to read back, one round trip on MySQL.
    const turn = plan.newSession
      ? await this.deps.sessions.startSession(req.caller, plan.newSession, first, options)
      : await this.deps.sessions.addTurn(req.caller, plan.sessionId, first, { ...options, seen: plan.session });
    const outcome = this.runner.run({
      caller: req.caller,
      requestId,
      sessionId: turn.sessionId,
      turnId,
      mode: plan.mode,
      model: plan.model,
      request: plan.request,
      continued: false,
      firstDeltaIndex: 0,
      priorUsage: null,
      chainExpiry: plan.chainExpiry,
      restartChain: plan.restartChain,
    });
    return { accepted: { sessionId: turn.sessionId, turnId, sequenceNumber: turn.sequenceNumber }, outcome };
  }

  /** DD-002A: the full instruction (and every file version sent) is in the blob store before the turn exists. */
  private async storeInputs(req: InstructionRequest, plan: PlannedInstruction, turnId: string): Promise<string> {
    const orgId = req.caller.orgId;
    const files = new SessionFiles(this.deps.blobs, orgId, plan.sessionId);
    const [url] = await Promise.all([
      new TurnBlobs(this.deps.blobs, orgId, plan.sessionId, turnId).put(TURN_BLOBS.instruction, req.instruction),
      ...plan.newFileVersions.map((f) => files.put(f.contentHash, f.content)),
    ]);
    return url;
  }

  /** AGN-033 follow-on: the same turn continues with function_call_output items on its last response. */
  private async continueWithToolResults(req: ToolResultsRequest, requestId: string | null): Promise<StartedTurn> {
    const { sessions, contexts } = this.deps;
    const turn = await sessions.getTurn(req.caller, req.sessionId, req.turnId);
    if (!turn) throw notFound('turn');
    if (turn.createdByUser.id !== req.caller.userId) throw forbidden("only the turn's author can answer its tool calls");
    if (turn.status !== 'PENDING' || turn.pendingToolCalls.length === 0 || !turn.openAIResponseId) {
      throw conflict('the turn is not waiting for tool results', { sessionId: req.sessionId, turnId: req.turnId });
    }
    const results = matchToolResults(turn.pendingToolCalls, req.toolResults);
    const session = await sessions.getSession(req.caller, req.sessionId);
    if (!session) throw notFound('session');
    const [conversation] = session.conversationContextId
      ? await contexts.conversationContextsByIds(req.caller.orgId, [session.conversationContextId])
      : [];
    const blobs = new TurnBlobs(this.deps.blobs, req.caller.orgId, req.sessionId, req.turnId);
    const firstDeltaIndex = await blobs.streamedDeltas();
    await sessions.resumeTurn(req.caller, req.sessionId, req.turnId, turn.pendingToolCalls.map((c) => c.toolCallId), {
      owner: this.deps.instanceId,
      expiresAt: this.inFlight.leaseUntil(),
    });
    const model = turn.openAIModel ?? this.deps.config.defaultModel;
    const ttlMs = this.deps.config.chainTtlSeconds * 1000;
    // Server outputs of the response that also asked the client go with the client's results.
    const kept = takePendingOutputs(answerClientCalls(turn.toolCalls, results));
    const answered = kept.records.filter((r) => r.origin === 'CLIENT' && results.some((x) => x.toolCallId === r.id));
    const outputs: LlmToolOutput[] = [
      ...kept.outputs.map((o) => ({ type: 'function_call_output' as const, callId: o.callId, output: o.output })),
      ...results.map((r) => ({ type: 'function_call_output' as const, callId: r.toolCallId, output: toolOutputText(r) })),
    ];
    const outcome = this.runner.run({
      caller: req.caller,
      requestId,
      sessionId: req.sessionId,
      turnId: req.turnId,
      mode: turn.mode,
      model,
      request: llmRequestOf(conversation ?? null, { model, previousResponseId: turn.openAIResponseId, input: outputs }),
      continued: true,
      firstDeltaIndex,
      priorUsage: turn.usage,
      earlier: { toolCalls: kept.records, files: turn.files, answered },
      chainExpiry: (receivedAt) => turn.openAIChainExpiresDate ?? new Date(receivedAt.getTime() + ttlMs),
      restartChain: () =>
        restartContinuation(this.deps, {
          scope: req.caller,
          session,
          turn,
          conversation: conversation ?? null,
          model,
          outputs,
          chainTtlSeconds: this.deps.config.chainTtlSeconds,
        }),
    });
    return { accepted: { sessionId: req.sessionId, turnId: req.turnId, sequenceNumber: turn.sequenceNumber }, outcome };
  }

  /** DD-006: a NEW turn with the old (or a new) instruction, fresh retrieval and file analysis. */
  private async rerun(req: RerunRequest, requestId: string | null): Promise<StartedTurn> {
    const [old, session] = await Promise.all([
      this.deps.sessions.getTurn(req.caller, req.sessionId, req.turnId),
      this.deps.sessions.getSession(req.caller, req.sessionId),
    ]);
    if (!old || !session) throw notFound('turn');
    const stored = req.instruction
      ? null
      : await new TurnBlobs(this.deps.blobs, req.caller.orgId, req.sessionId, req.turnId).getText(TURN_BLOBS.instruction);
    return this.startInstruction(
      {
        kind: 'instruction',
        caller: req.caller,
        sessionId: session.id,
        agentContextId: session.agentContextId,
        conversationContextId: session.conversationContextId,
        instruction: req.instruction ?? stored ?? old.instructionSummary,
        mode: old.mode,
        workspaceId: session.workspaceId,
        repo: session.repo,
        language: session.defaultLanguage,
        sessionName: null,
        activeFiles:
          req.activeFiles ?? old.activeFileRefs.map((f) => ({ path: f.path, content: null, contentHash: f.contentHash, isTouched: f.isTouched })),
        retrievalPathPrefixes: req.retrievalPathPrefixes === undefined ? old.requestMetadata.retrievalPathPrefixes : req.retrievalPathPrefixes,
        followsTurnId: null,
      },
      requestId,
    );
  }
}

import type { BudgetHold, ExecuteBudget } from '../../src/budgets/execute-budget.port';
import { DomainError } from '../../src/domain/errors';
import type { ExecuteResponse } from '../../src/domain/execute-response';
import { LlmError } from '../../src/llm/llm.port';
import { IdempotentCalls } from '../../src/orchestrator/idempotent-calls';
import { Orchestrator } from '../../src/orchestrator/orchestrator';
import { HISTORY_WINDOW } from '../../src/orchestrator/instruction-planner';
import type { InstructionRequest } from '../../src/orchestrator/request';
import type { PipelineSettings } from '../../src/orchestrator/settings';
import { RequestHandler, type ExecuteInputFields } from '../../src/orchestrator/request-handler';
import { DEFAULT_MODEL_PRICING } from '../../src/domain/pricing';
import type { RetrievalRequest, RetrievedChunk, Retriever } from '../../src/retrieval/retrieval.port';
import { ChainHistoryCache } from '../../src/sessions/chain-history-cache';
import {
  FixedRetriever,
  InMemoryBlobStore,
  InMemoryContexts,
  InMemoryIdempotencyKeys,
  InMemoryTurnStore,
  RecordingOutput,
  RecordingLogger,
  ScriptedModel,
} from '../support/in-memory-ports';
import { alice, bob } from '../support/testkit/users';

const READ_FILE = { name: 'read_file', description: null, parametersJson: '{"type":"object"}' };

/** Admits everything, or refuses everything as an exhausted budget does. */
class TestBudget implements ExecuteBudget {
  refuse = false;
  held = 0;
  async admit(): Promise<BudgetHold> {
    if (this.refuse) throw new DomainError('RATE_LIMITED', 'at most 1 execute per minute', { retryAfterSeconds: 60 });
    this.held++;
    return { release: () => void this.held-- };
  }
  async close(): Promise<void> {}
}

/** The turn pipeline on in-memory ports: no database, no network. */
function pipeline(retriever: Retriever = new FixedRetriever(), settings: Partial<PipelineSettings> = {}) {
  const store = new InMemoryTurnStore();
  const blobs = new InMemoryBlobStore();
  const model = new ScriptedModel();
  const output = new RecordingOutput();
  const logger = new RecordingLogger();
  const budget = new TestBudget();
  const contexts = new InMemoryContexts(
    [{ id: 'ac-1', orgId: 'acme', name: 'Backend', description: null, vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' }],
    [{ id: 'cc-1', orgId: 'acme', name: 'Refactor', description: null, systemPrompt: 'Be careful.', model: null, temperature: 0.3, tools: [READ_FILE] }],
  );
  const orchestrator = new Orchestrator({
    sessions: store,
    history: new ChainHistoryCache(store, { window: HISTORY_WINDOW, maxObjects: 10_000 }),
    leases: store,
    contexts,
    retriever,
    blobs,
    llm: model,
    output,
    idempotencyKeys: new InMemoryIdempotencyKeys(),
    config: { defaultModel: 'gpt-4.1-mini', chainTtlSeconds: 3600, toolResultTimeoutSeconds: 60, turnLeaseSeconds: 120, modelPricing: DEFAULT_MODEL_PRICING, maxServerToolRounds: 8, maxClientToolRounds: 32, ...settings },
    retrievalLimit: 8,
    logger,
    now: () => new Date(),
    instanceId: 'gw-test',
  });
  const idempotency = new IdempotentCalls(new InMemoryIdempotencyKeys(), { waitMs: 1000, retentionSeconds: 60, runningMs: 60_000 }, logger);
  const handler = new RequestHandler({ orchestrator, idempotency, budget, logger });
  const instruction = (extra: Partial<InstructionRequest> = {}): InstructionRequest => ({
    kind: 'instruction',
    caller: alice,
    sessionId: null,
    agentContextId: 'ac-1',
    conversationContextId: null,
    instruction: 'Where is the rate limiter configured?',
    mode: 'ask',
    workspaceId: null,
    repo: null,
    language: null,
    sessionName: null,
    activeFiles: [],
    retrievalPathPrefixes: null,
    followsTurnId: null,
    ...extra,
  });
  const input = (extra: Partial<ExecuteInputFields> = {}): ExecuteInputFields => ({ agentContextId: 'ac-1', instruction: 'Explain this', ...extra });
  const onlyTurn = () => {
    expect(store.turns.size).toBe(1);
    return [...store.turns.values()][0]!.turn;
  };
  return { store, blobs, model, output, logger, budget, orchestrator, handler, instruction, input, onlyTurn };
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function final(answer: ExecuteResponse): Extract<ExecuteResponse, { kind: 'final' }> {
  if (answer.kind !== 'final') throw new Error(`expected a final answer, got ${answer.kind}`);
  return answer;
}

describe('the turn pipeline on its ports', () => {
  it('runs an instruction: a new session, a PENDING turn once the instruction is stored, then COMPLETED with the streamed answer', async () => {
    const p = pipeline();
    p.model.enqueue({ kind: 'text', chunks: ['The limiter ', 'is in config.ts.'], usage: { inputTokens: 10, outputTokens: 3 } });
    const started = await p.orchestrator.start(p.instruction());
    const answer = final(await started.outcome);
    expect(answer.primaryOutputText).toBe('The limiter is in config.ts.');

    const turn = p.onlyTurn();
    expect(turn).toMatchObject({ id: started.accepted.turnId, sessionId: started.accepted.sessionId, sequenceNumber: 1, status: 'COMPLETED' });
    expect(turn.usage).toMatchObject({ inputTokens: 10, outputTokens: 3, isEstimated: false });
    expect(p.store.events.map((e) => [e.previousStatus, e.status])).toEqual([[null, 'PENDING'], ['PENDING', 'COMPLETED']]);
    const session = p.store.sessions.get(turn.sessionId);
    expect(session).toMatchObject({ name: 'Where is the rate limiter configured?', turnCount: 1, lastTurnStatus: 'COMPLETED' });
    expect(session?.usage).toMatchObject({ inputTokens: 10, outputTokens: 3 });
    expect(p.blobs.textEndingWith(`/turns/${turn.id}/instruction.md`)).toBe('Where is the rate limiter configured?');
    expect(p.blobs.textEndingWith(`/turns/${turn.id}/answer.md`)).toBe('The limiter is in config.ts.');
    expect(p.output.deltas.map((d) => [d.index, d.textDelta])).toEqual([[0, 'The limiter '], [1, 'is in config.ts.']]);
    expect(p.output.ends).toHaveLength(1);
  });

  it('stores a provider failure as FAILED and answers its code with the turn\'s ids', async () => {
    const p = pipeline();
    p.model.enqueue({ kind: 'fail', error: new LlmError('failed', 'the model provider failed (HTTP 500)') });
    const started = await p.orchestrator.start(p.instruction());
    await expect(started.outcome).rejects.toMatchObject({
      code: 'LLM_FAILED',
      message: 'the model provider failed (HTTP 500)',
      details: { sessionId: started.accepted.sessionId, turnId: started.accepted.turnId },
    });
    expect(p.onlyTurn()).toMatchObject({ status: 'FAILED', errors: ['the model provider failed (HTTP 500)'] });
    expect(p.store.sessions.get(started.accepted.sessionId)?.lastTurnStatus).toBe('FAILED');
    expect(p.output.ends).toHaveLength(1);
    expect(p.logger.lines.filter((l) => l.level === 'error')).toEqual([]);

    p.model.enqueue({ kind: 'fail', error: new LlmError('timeout', 'the model did not finish answering within 5 ms') });
    const again = await p.orchestrator.start(p.instruction({ sessionId: started.accepted.sessionId }));
    await expect(again.outcome).rejects.toMatchObject({ code: 'LLM_TIMEOUT' });
  });

  it('pauses for client tools, then continues the same turn on its last response with their results', async () => {
    const p = pipeline();
    p.model.enqueue(
      { kind: 'tool_calls', calls: [{ toolCallId: 'call_1', name: 'read_file', argumentsJson: '{"path":"a.ts"}' }] },
      { kind: 'text', chunks: ['a.ts exports nothing.'] },
    );
    const started = await p.orchestrator.start(p.instruction({ conversationContextId: 'cc-1' }));
    const continuation = await started.outcome;
    expect(continuation).toMatchObject({ kind: 'client_tool_continuation', toolCalls: [{ toolCallId: 'call_1', name: 'read_file' }] });
    const paused = p.onlyTurn();
    expect(paused).toMatchObject({ status: 'PENDING', pendingToolCalls: [{ toolCallId: 'call_1' }], openAIResponseId: 'resp_1' });
    expect(p.store.turns.get(paused.id)?.lease.owner).toBeNull();

    const { sessionId, turnId } = started.accepted;
    const results = [{ toolCallId: 'call_1', executionMs: 4, resultJson: '{"text":"export {}"}', errorMessage: null }];
    const resumed = await p.orchestrator.start({ kind: 'tool_results', caller: alice, sessionId, turnId, toolResults: results });
    expect(final(await resumed.outcome).primaryOutputText).toBe('a.ts exports nothing.');
    expect(p.onlyTurn()).toMatchObject({ id: turnId, status: 'COMPLETED', pendingToolCalls: [] });
    // Both rounds carry the conversation context; the second chains onto the first response.
    expect(p.model.requests.map((r) => [r.instructions, r.temperature, r.tools.map((t) => t.name), r.previousResponseId])).toEqual([
      ['Be careful.', 0.3, ['read_file', 'write_file', 'search_code'], null],
      ['Be careful.', 0.3, ['read_file', 'write_file', 'search_code'], 'resp_1'],
    ]);
    expect(p.model.requests[1]?.input).toEqual([{ type: 'function_call_output', callId: 'call_1', output: '{"text":"export {}"}' }]);

    await expect(p.orchestrator.start({ kind: 'tool_results', caller: alice, sessionId, turnId, toolResults: results })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('fails a turn that asks the client for tools more than MAX_CLIENT_TOOL_ROUNDS times, keeping the usage of every round', async () => {
    const p = pipeline(new FixedRetriever(), { maxClientToolRounds: 2 });
    const asks = (n: number) => ({
      kind: 'tool_calls' as const,
      calls: [{ toolCallId: `call_${n}`, name: 'read_file', argumentsJson: `{"path":"${n}.ts"}` }],
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    p.model.enqueue(asks(1), asks(2), asks(3));
    const started = await p.orchestrator.start(p.instruction({ conversationContextId: 'cc-1' }));
    expect(await started.outcome).toMatchObject({ kind: 'client_tool_continuation' });
    const { sessionId, turnId } = started.accepted;
    const answer = (n: number) =>
      p.orchestrator.start({ kind: 'tool_results', caller: alice, sessionId, turnId, toolResults: [{ toolCallId: `call_${n}`, executionMs: 1, resultJson: '{}', errorMessage: null }] });
    expect(await (await answer(1)).outcome).toMatchObject({ kind: 'client_tool_continuation', toolCalls: [{ toolCallId: 'call_2' }] });
    const third = await answer(2);
    await expect(third.outcome).rejects.toMatchObject({ code: 'TOO_MANY_TOOL_ROUNDS', details: { limit: 2, sessionId, turnId } });
    await expect(third.outcome).rejects.toThrow('MAX_CLIENT_TOOL_ROUNDS (2)');
    const failed = p.onlyTurn();
    expect(failed).toMatchObject({ status: 'FAILED', pendingToolCalls: [], openAIResponseId: 'resp_3' });
    expect(failed.errors[0]).toContain('MAX_CLIENT_TOOL_ROUNDS (2)');
    expect(failed.usage).toMatchObject({ inputTokens: 300, outputTokens: 30, isEstimated: false });
    expect(failed.toolCalls.map((c) => [c.id, c.status, c.clientRound])).toEqual([
      ['call_1', 'COMPLETED', 1],
      ['call_2', 'COMPLETED', 2],
      ['call_3', 'ABANDONED', 3],
    ]);
    expect(p.model.requests).toHaveLength(3);
  });

  it('cancels a running turn for its author, keeping what was streamed; others may not', async () => {
    const p = pipeline();
    p.model.enqueue({ kind: 'stall', chunks: ['Half an '] });
    const started = await p.orchestrator.start(p.instruction());
    const { sessionId, turnId } = started.accepted;
    await waitFor(() => p.output.deltas.length === 1, 'the first delta');

    await expect(p.orchestrator.cancel(bob, sessionId, turnId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const cancelled = await p.orchestrator.cancel(alice, sessionId, turnId);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', agentAnswerSummary: 'Half an ', warnings: ['Cancelled by Name of alice.'] });
    await expect(started.outcome).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(p.blobs.textEndingWith(`/turns/${turnId}/answer.md`)).toBe('Half an ');
    expect(await p.orchestrator.cancel(alice, sessionId, turnId)).toMatchObject({ status: 'CANCELLED' });
    expect(p.store.events.map((e) => e.status)).toEqual(['PENDING', 'CANCELLED']);
  });

  it('answers SERVICE_UNAVAILABLE and records nothing while the session store is away', async () => {
    const p = pipeline();
    p.store.down = true;
    await expect(p.handler.execute(alice, p.input())).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'the session store is unavailable; no turn was recorded, try again later',
    });
    expect(p.model.requests).toEqual([]);
    expect(p.budget.held).toBe(0);
  });

  it('keeps an answer that arrived while the session store was away, and stores it once the store is back', async () => {
    const p = pipeline();
    p.model.enqueue({ kind: 'text', chunks: ['kept'] });
    p.model.afterAnswer = () => void (p.store.down = true);
    const started = await p.orchestrator.start(p.instruction());
    await expect(started.outcome).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'the session store is unavailable; the turn is stored as soon as it is back',
      details: { turnId: started.accepted.turnId },
    });
    expect(p.onlyTurn().status).toBe('PENDING');
    p.store.down = false;
    await waitFor(() => p.onlyTurn().status === 'COMPLETED', 'the kept answer to be stored');
    expect(p.onlyTurn().agentAnswerSummary).toBe('kept');
  });

  it('refuses over budget before anything is recorded or called', async () => {
    const p = pipeline();
    p.budget.refuse = true;
    await expect(p.handler.execute(alice, p.input())).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: 60 } });
    expect([p.store.sessions.size, p.store.turns.size, p.store.events.length, p.blobs.objects.size, p.model.requests.length]).toEqual([0, 0, 0, 0, 0]);
  });

  it('creates no session for a request something refuses: an unknown context, a blob store that is away', async () => {
    const p = pipeline();
    await expect(p.handler.execute(alice, p.input({ agentContextId: 'ac-unknown' }))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    p.blobs.down = true;
    await expect(p.handler.execute(alice, p.input())).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'the blob store is unavailable; no turn was recorded, try again later',
    });
    expect([p.store.sessions.size, p.store.turns.size, p.model.requests.length, p.budget.held]).toEqual([0, 0, 0, 0]);
  });

  it('gives every new instruction in a session the next turn, and refuses one while the last is still running', async () => {
    const p = pipeline();
    p.model.enqueue({ kind: 'text', chunks: ['one'] }, { kind: 'stall', chunks: [] });
    const first = await p.orchestrator.start(p.instruction());
    await first.outcome;
    const { sessionId } = first.accepted;
    const second = await p.orchestrator.start(p.instruction({ sessionId }));
    expect(second.accepted.sequenceNumber).toBe(2);
    await expect(p.orchestrator.start(p.instruction({ sessionId }))).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await p.orchestrator.cancel(alice, sessionId, second.accepted.turnId);
    await expect(second.outcome).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(p.store.sessions.size).toBe(1);
  });

  it('sends no further provider round when the turn is cancelled while a server tool runs, and keeps what it spent and did', async () => {
    const cancelling: Promise<unknown>[] = [];
    const slow: Retriever = {
      async retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]> {
        if (request.query !== 'slow') return [];
        const turn = p.onlyTurn();
        cancelling.push(p.orchestrator.cancel(alice, turn.sessionId, turn.id));
        // The in-memory store answers in microtasks: after one macrotask the call is aborted.
        await new Promise((r) => setTimeout(r, 0));
        return [];
      },
    };
    const p = pipeline(slow);
    p.model.enqueue({ kind: 'tool_calls', calls: [{ toolCallId: 'call_1', name: 'search_code', argumentsJson: '{"query":"slow"}' }] });
    const started = await p.orchestrator.start(p.instruction({ conversationContextId: 'cc-1' }));
    await expect(started.outcome).rejects.toMatchObject({ code: 'CANCELLED' });
    await Promise.all(cancelling);
    expect(p.model.requests).toHaveLength(1);
    const turn = p.onlyTurn();
    expect(turn.status).toBe('CANCELLED');
    expect(turn.toolCalls.map((c) => [c.name, c.origin, c.status])).toEqual([['search_code', 'SERVER', 'COMPLETED']]);
    // The scripted model reports no usage: the one round is estimated, not dropped.
    expect(turn.usage).toMatchObject({ isEstimated: true });
    expect(turn.usage!.inputTokens).toBeGreaterThan(0);
  });
});

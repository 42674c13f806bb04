import { describeWithMysql } from '../support/services';
import { alice, bob, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

/** Issue 3 point 5: client tools (AGN-033 3.3, 5) on MariaDB. */
describeWithMysql('client tool continuations on MariaDB', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: 'mysql', env: { TOOL_RESULT_TIMEOUT_SECONDS: '2', TURN_LEASE_SECONDS: '2' } });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
  });

  /** A turn that waits on two read_file calls. */
  async function paused() {
    h.fake.enqueue({
      kind: 'tool_calls',
      text: 'Let me read both files.',
      calls: [
        { name: 'read_file', arguments: '{"path":"a.ts"}' },
        { name: 'read_file', arguments: '{"path":"b.ts"}' },
      ],
      usage: { input: 300, output: 40 },
    });
    const res = await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'Compare a.ts and b.ts' });
    return res.body.data!.execute;
  }

  const results = (calls: { toolCallId: string }[]) =>
    calls.map((c, i) => (i === 0 ? { toolCallId: c.toolCallId, executionMs: 4, resultJson: '{"text":"A"}' } : { toolCallId: c.toolCallId, executionMs: 9, errorMessage: 'file not found' }));

  it('pauses the turn when the model calls a declared tool and answers with a continuation', async () => {
    const answer = await paused();
    expect(answer).toMatchObject({
      __typename: 'AgentToolContinuation',
      kind: 'CLIENT_TOOL_CONTINUATION',
      modeDisplayName: 'Ask',
      toolContinuationMessage: 'Let me read both files.',
    });
    expect(answer).not.toHaveProperty('primaryOutputText');
    expect(answer.toolCalls?.map((c) => [c.name, c.argumentsJson, c.arguments])).toEqual([
      ['read_file', '{"path":"a.ts"}', { path: 'a.ts' }],
      ['read_file', '{"path":"b.ts"}', { path: 'b.ts' }],
    ]);
    const turn = await h.turn(alice, answer.sessionId, answer.turnId);
    expect(turn.status).toBe('PENDING');
    expect(turn.pendingToolCalls).toEqual(answer.toolCalls?.map(({ toolCallId, name, argumentsJson }) => ({ toolCallId, name, argumentsJson })));
    // The conversation's client tool, then the gateway's own server tools.
    const tools = h.fake.requests[0]?.body.tools as { name: string }[];
    expect(tools[0]).toEqual(
      { type: 'function', name: 'read_file', description: 'Reads a file of the workspace', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, strict: false },
    );
    expect(tools.map((t) => t.name)).toEqual(['read_file', 'write_file', 'search_code']);
    expect(h.output.of(answer.turnId).ends).toBe(1);
  });

  it('continues the same turn with function_call_output items on previous_response_id and completes it', async () => {
    const answer = await paused();
    const pausedTurn = await h.turn(alice, answer.sessionId, answer.turnId);
    h.fake.enqueue({ kind: 'text', chunks: ['a.ts says A; ', 'b.ts is missing.'], usage: { input: 500, output: 20 } });
    const res = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    const final = res.body.data!.execute;
    expect(final).toMatchObject({ kind: 'FINAL', turnId: answer.turnId, primaryOutputText: 'a.ts says A; b.ts is missing.' });
    const body = h.fake.requests[1]!.body;
    expect(body.previous_response_id).toBe(pausedTurn.openAIResponseId);
    expect(body.input).toEqual([
      { type: 'function_call_output', call_id: answer.toolCalls![0]!.toolCallId, output: '{"text":"A"}' },
      { type: 'function_call_output', call_id: answer.toolCalls![1]!.toolCallId, output: '{"error":"file not found"}' },
    ]);
    expect(body.instructions).toBe('You are a careful refactoring assistant.');
    expect((body.tools as { name: string }[]).map((t) => t.name)).toEqual(['read_file', 'write_file', 'search_code']);
    const done = await h.turn(alice, answer.sessionId, answer.turnId);
    expect(done).toMatchObject({ status: 'COMPLETED', sequenceNumber: 1, pendingToolCalls: [], agentAnswerSummary: 'a.ts says A; b.ts is missing.' });
    expect(done.usage).toMatchObject({ inputTokens: 800, outputTokens: 60, isEstimated: false });
    expect(done.openAIResponseId).not.toBe(pausedTurn.openAIResponseId);
    const rounds = JSON.parse((await h.blob(alice, done.openAIRequestPayloadUrl!)).text) as unknown[];
    expect(rounds).toHaveLength(2);
    // The output stream of the turn stays gap-free across the two provider rounds.
    const streamed = h.output.of(answer.turnId);
    expect(streamed.text).toBe('Let me read both files.a.ts says A; b.ts is missing.');
    expect(streamed.indexes).toEqual(streamed.indexes.map((_, i) => i));
  });

  it.each([
    ['too few results', (r: ReturnType<typeof results>) => r.slice(0, 1), 'expected 2 tool result(s), got 1'],
    ['reversed order', (r: ReturnType<typeof results>) => [...r].reverse(), 'tool result 1 answers'],
    ['an unknown id', (r: ReturnType<typeof results>) => [r[0]!, { ...r[1]!, toolCallId: 'call_made_up' }], 'tool result 2 answers call_made_up'],
    ['both result and error', (r: ReturnType<typeof results>) => [{ ...r[0]!, errorMessage: 'and failed' }, r[1]!], 'exactly one of resultJson or errorMessage'],
  ])('refuses %s with TOOL_RESULTS_MISMATCH and leaves the turn untouched', async (_what, mangle, message) => {
    const answer = await paused();
    const before = await h.turn(alice, answer.sessionId, answer.turnId);
    const res = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: mangle(results(answer.toolCalls!)) });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('TOOL_RESULTS_MISMATCH');
    expect(res.body.errors?.[0]?.message).toContain(message);
    expect(await h.turn(alice, answer.sessionId, answer.turnId)).toEqual(before);
    expect(h.fake.requests).toHaveLength(1);
    // The exact results still work afterwards.
    const ok = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    expect(ok.body.data?.execute.kind).toBe('FINAL');
  });

  it.each([
    ['negative', -1],
    ['longer than a continuation may wait', 7 * 24 * 3600 * 1000 + 1],
    ['the largest GraphQL Int', 2 ** 31 - 1],
  ])('refuses an executionMs that is %s with BAD_USER_INPUT and leaves the turn untouched', async (_what, executionMs) => {
    const answer = await paused();
    const before = await h.turn(alice, answer.sessionId, answer.turnId);
    const [first, second] = results(answer.toolCalls!);
    const res = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: [{ ...first!, executionMs }, second!] });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'toolResults.executionMs' });
    expect(res.body.errors?.[0]?.message).toMatch(/must be an integer between 0 and 604800000/);
    expect(await h.turn(alice, answer.sessionId, answer.turnId)).toEqual(before);
    // Beyond GraphQL's Int the request does not even coerce.
    const huge = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: [{ ...first!, executionMs: 1e308 }, second!] });
    expect(huge.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('refuses tool results without the turn, from another user, or for a turn that is not waiting', async () => {
    const answer = await paused();
    const noTurn = await h.execute(alice, { sessionId: answer.sessionId, toolResults: results(answer.toolCalls!) });
    expect(noTurn.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'turnId' });
    await h.gateway.sessions.lifecycle.updateSession(alice, answer.sessionId, { isPublic: true });
    const stranger = await h.execute(bob, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    expect(stranger.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    const again = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', turnId: answer.turnId });
  });

  it('blocks new instructions on the session while a continuation is pending (SESSION_BUSY)', async () => {
    const answer = await paused();
    const busy = await h.execute(alice, { sessionId: answer.sessionId, conversationContextId: h.conversationContextId, instruction: 'Something else' });
    expect(busy.body.errors?.[0]?.extensions).toMatchObject({ code: 'SESSION_BUSY', sessionId: answer.sessionId });
  });

  it('fails a continuation nobody answers within TOOL_RESULT_TIMEOUT_SECONDS, and refuses late results', async () => {
    const answer = await paused();
    h.clock.advance(2500);
    await h.gateway.orchestrator.sweepExpiredTurns();
    const failed = await h.turn(alice, answer.sessionId, answer.turnId);
    expect(failed).toMatchObject({ status: 'FAILED', errors: ['no tool results arrived within 2 seconds'], pendingToolCalls: [] });
    expect(failed.usage).toMatchObject({ inputTokens: 300, outputTokens: 40 });
    const late = await h.execute(alice, { sessionId: answer.sessionId, turnId: answer.turnId, toolResults: results(answer.toolCalls!) });
    expect(late.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(h.fake.requests).toHaveLength(1);
  });

  it('fails the turn when the model calls a tool the conversation does not declare', async () => {
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'rm_rf', arguments: '{}' }] });
    const res = await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'Clean up' });
    expect(res.body.errors?.[0]).toMatchObject({
      message: 'the model called a tool the conversation does not declare: rm_rf',
      extensions: { code: 'LLM_FAILED' },
    });
  });
});

import { describeWithMysql } from '../support/services';
import { alice, bob, mallory, startExecuteHarness, userTextOf, type ExecuteHarness } from '../support/execute';

/** Issue 3 point 1: the REST entry point (DD-004) and the client kinds, on MariaDB. */
describeWithMysql('POST /api/ai/agent/execute on MariaDB', () => {
  let h: ExecuteHarness;
  beforeAll(async () => {
    h = await startExecuteHarness({ mysql: true, env: { LLM_TIMEOUT_MS: '1500', LLM_MAX_RETRIES: '0' } });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
  });

  const body = (extra: Record<string, unknown> = {}) => ({ agentContextId: h.agentContextId, instruction: 'Explain this', ...extra });

  it('answers a final response as AGN-033 JSON: kind "final", camelCase, only the buckets that are present', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['The ', 'answer.'], usage: { input: 10, output: 3 } });
    const res = await h.rest(alice, body({ clientKind: 'CLI' }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['kind', 'modeDisplayName', 'primaryOutputText', 'sessionId', 'turnId', 'usage']);
    expect(res.body).toMatchObject({ kind: 'final', modeDisplayName: 'Ask', primaryOutputText: 'The answer.' });
    expect(res.body.usage).toEqual({ inputTokens: 10, outputTokens: 3, totalTokens: 13, estimatedCostUsd: 0.000009, isEstimated: false });
    const turn = await h.turn(alice, res.body.sessionId as string, res.body.turnId as string);
    expect(turn.status).toBe('COMPLETED');

    const warned = await h.rest(alice, body({ activeFiles: [{ path: 'huge.txt', content: 'y'.repeat(102_401) }] }));
    expect(warned.body.userWarnings).toEqual(['huge.txt (102401 bytes) is larger than 100 KB and was not sent to the model.']);
  });

  it('answers a continuation with kind "client_tool_continuation" and none of the final-only buckets; tool results come back over REST too', async () => {
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'read_file', arguments: '{"path":"r.ts"}' }] });
    const res = await h.rest(alice, body({ conversationContextId: h.conversationContextId, clientKind: 'THICK_CLIENT' }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['kind', 'modeDisplayName', 'sessionId', 'toolCalls', 'turnId']);
    expect(res.body.kind).toBe('client_tool_continuation');
    const [call] = res.body.toolCalls as { toolCallId: string; name: string; argumentsJson: string }[];
    expect(call).toMatchObject({ name: 'read_file', argumentsJson: '{"path":"r.ts"}' });

    const mismatch = await h.rest(alice, body({ sessionId: res.body.sessionId, turnId: res.body.turnId, instruction: null, toolResults: [] }));
    expect(mismatch).toMatchObject({ status: 400, body: { errorCode: 'TOOL_RESULTS_MISMATCH', errorMessage: 'expected 1 tool result(s), got 0' } });
    const done = await h.rest(alice, body({ sessionId: res.body.sessionId, turnId: res.body.turnId, instruction: null, toolResults: [{ toolCallId: call!.toolCallId, executionMs: 3, resultJson: '"export {}"' }] }));
    expect(done.status).toBe(200);
    expect(done.body.kind).toBe('final');
  });

  it.each([
    ['no bearer token', null, () => body(), 401, 'UNAUTHENTICATED'],
    ['a body that is not an object', alice, () => '[1,2]', 400, 'BAD_USER_INPUT'],
    ['an unknown field', alice, () => body({ prompt: 'hi' }), 400, 'BAD_USER_INPUT'],
    ['a wrongly typed field', alice, () => body({ activeFiles: [{ path: 7 }] }), 400, 'BAD_USER_INPUT'],
    ['an unknown client kind', alice, () => body({ clientKind: 'TOASTER' }), 400, 'BAD_USER_INPUT'],
    ['an empty instruction', alice, () => body({ instruction: '   ' }), 400, 'BAD_USER_INPUT'],
    ['an executionMs of 1e308', alice, () => body({ toolResults: [{ toolCallId: 'call_1', executionMs: 1e308, resultJson: '1' }] }), 400, 'BAD_USER_INPUT'],
    ['a negative executionMs', alice, () => body({ toolResults: [{ toolCallId: 'call_1', executionMs: -5, resultJson: '1' }] }), 400, 'BAD_USER_INPUT'],
    ['a session of another org', mallory, () => body({ sessionId: '00000000-0000-0000-0000-000000000000' }), 404, 'NOT_FOUND'],
  ])('refuses %s with {errorCode, errorMessage} and the fitting status', async (_what, caller, make, status, code) => {
    const res = await h.rest(caller, make());
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ errorCode: code, errorMessage: expect.any(String) });
    expect(h.fake.requests).toHaveLength(0);
  });

  it('refuses malformed JSON with 400', async () => {
    const res = await h.rest(alice, '{"agentContextId": ');
    expect(res).toEqual({ status: 400, body: { errorCode: 'BAD_USER_INPUT', errorMessage: 'the request body is not valid JSON' } });
  });

  it('maps provider failures and timeouts to 502 / 504 and names the turn', async () => {
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'nope' });
    const failed = await h.rest(alice, body());
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ errorCode: 'LLM_FAILED', errorMessage: 'the model provider rejected the request (HTTP 400): nope', sessionId: expect.any(String), turnId: expect.any(String) });
    h.fake.enqueue({ kind: 'hang' });
    const slow = await h.rest(alice, body());
    expect(slow.status).toBe(504);
    expect(slow.body.errorCode).toBe('LLM_TIMEOUT');
  });

  it('answers SESSION_BUSY with 409 and a reused idempotency key with 422 (the Idempotency-Key header works too)', async () => {
    h.fake.enqueue({ kind: 'stall', chunks: ['busy'] });
    const started = await h.executeAsync(alice, { instruction: 'Keep busy' });
    const { sessionId, turnId } = started.body.data!.executeAsync;
    await h.fake.waitForRequests(1);
    const busy = await h.rest(alice, body({ sessionId }));
    expect(busy).toMatchObject({ status: 409, body: { errorCode: 'SESSION_BUSY' } });
    await h.t.gql(h.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }', { s: sessionId, t: turnId });

    await h.rest(alice, body({ instruction: 'first' }), { 'idempotency-key': 'rest-key-1' });
    const reused = await h.rest(alice, body({ instruction: 'second' }), { 'idempotency-key': 'rest-key-1' });
    expect(reused).toMatchObject({ status: 422, body: { errorCode: 'IDEMPOTENCY_KEY_REUSED' } });
  });

  it('normalises every client kind into one request: the provider sees the same canonical instruction and paths', async () => {
    await h.rest(alice, body({ clientKind: 'CLI', instruction: 'Fix it\r\nplease\r\n', activeFiles: [{ path: '.\\src\\x.ts', content: 'x' }] }));
    await h.execute(alice, { clientKind: 'BROWSER', instruction: '  Fix it\nplease  ', activeFiles: [{ path: './src/x.ts', content: 'x' }] });
    await h.rest(alice, body({ clientKind: 'THICK_CLIENT', instruction: 'Fix it\nplease\n\n', activeFiles: [{ path: 'src/x.ts', content: 'x' }] }));
    const sent = h.fake.requests.map((r) => userTextOf(r.body));
    expect(new Set(sent).size).toBe(1);
    expect(sent[0]).toContain('### src/x.ts');
    expect(sent[0]).toMatch(/## Instruction\n\nFix it\nplease$/);
  });

  it('lets only readers of a session continue it', async () => {
    const mine = await h.rest(alice, body());
    const other = await h.rest(bob, body({ sessionId: mine.body.sessionId }));
    expect(other).toMatchObject({ status: 404, body: { errorCode: 'NOT_FOUND' } });
  });

  it('takes the AGN-033 follow-on shape (sessionId + turnId with an instruction), a retrieval scope and metadata-only files', async () => {
    const first = await h.rest(alice, body());
    const ids = { sessionId: first.body.sessionId, turnId: first.body.turnId };
    const hash = 'a'.repeat(64);
    const next = await h.rest(alice, body({ ...ids, retrievalPathPrefixes: ['ui/primitives'], activeFiles: [{ path: 'big.bin', contentHash: hash, sizeBytes: 300_000 }] }));
    expect(next.status).toBe(200);
    expect(next.body.userWarnings).toEqual(['big.bin (300000 bytes) is larger than 100 KB and was not sent to the model.']);
    expect(h.retriever.requests.at(-1)?.pathPrefixes).toEqual(['ui/primitives']);
    const stale = await h.rest(alice, body(ids));
    expect(stale).toMatchObject({ status: 409, body: { errorCode: 'TURN_NOT_LATEST' } });
    const bad = await h.rest(alice, body({ activeFiles: [{ path: 'x', contentHash: hash, sizeBytes: 1.5 }] }));
    expect(bad).toMatchObject({ status: 400, body: { errorCode: 'BAD_USER_INPUT' } });
  });
});

import { createHash } from 'node:crypto';
import { RetrievalError } from '../../src/retrieval/retrieval-error';
import { describeWithMysql } from '../support/services';
import { alice, chunk, EXECUTE_SETUP, startGateway, userTextOf, type TestGateway } from '../support/testkit';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const DAY = 24 * 3600 * 1000;

/**
 * Issue 3 points 2, 3, 4, 6 and 10 over GraphQL against the local Responses API: what a
 * turn records at each step, what the provider receives (and does not), and usage.
 */
function lifecycleSuite(database: 'sqlite' | 'mysql'): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({
      ...EXECUTE_SETUP,
      database,
      env: { OPENAI_CHAIN_TTL_SECONDS: String(7 * 24 * 3600), MODEL_PRICING: '{"gpt-4.1-mini": {"inputPer1K": 0.5, "outputPer1K": 2}}' },
    });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
    h.retriever.chunks = [];
    h.retriever.failWith = null;
  });

  const conversation = () => ({ conversationContextId: h.conversationContextId });

  it('stores the instruction and makes the turn PENDING before the model is called, then COMPLETED with everything DD-002B lists', async () => {
    const instruction = `Refactor the retry loop.\n${'details '.repeat(400)}`;
    const answer = 'A'.repeat(3000);
    h.fake.enqueue({ kind: 'text', chunks: [answer.slice(0, 1000), answer.slice(1000, 2000), answer.slice(2000)], usage: { input: 1200, output: 800 }, delayMs: 400 });
    const started = await h.executeAsync(alice, { ...conversation(), instruction, mode: 'edit', activeFiles: [{ path: 'src/retry.ts', content: 'export {};\n' }] });
    const { sessionId, turnId, sequenceNumber } = started.body.data!.executeAsync;
    expect(sequenceNumber).toBe(1);

    const pending = await h.turn(alice, sessionId, turnId);
    expect(pending).toMatchObject({ status: 'PENDING', mode: 'edit', openAIModel: 'gpt-4.1-mini', agentAnswerSummary: null, fullAgentAnswerUrl: null });
    expect(pending.instructionSummary).toBe(instruction.slice(0, 1024));
    expect(pending.fullInstructionUrl).toBe(`/blobs/sessions/${sessionId}/turns/${turnId}/instruction.md`);
    expect((await h.blob(alice, pending.fullInstructionUrl!)).text).toBe(instruction.trim());
    expect(pending.activeFileRefs).toEqual([
      { path: 'src/retry.ts', contentHash: sha('export {};\n'), sizeBytes: 11, isTouched: true, wasSentToLLM: true, wasTooLargeToSend: false },
    ]);

    const done = await h.waitForTurn(alice, sessionId, turnId);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      previousOpenAIResponseId: null,
      errors: [],
      usage: { inputTokens: 1200, outputTokens: 800, totalTokens: 2000, estimatedCostUsd: 2.2, isEstimated: false },
    });
    expect(done.openAIResponseId).toMatch(/^resp_/);
    expect(done.agentAnswerSummary).toBe(answer.slice(0, 1024));
    expect((await h.blob(alice, done.fullAgentAnswerUrl!)).text).toBe(answer);
    const received = Date.parse(done.openAIResponseReceivedDate!);
    expect(Date.parse(done.statusTimeStamp)).toBe(received);
    expect(Date.parse(done.openAIChainExpiresDate!) - received).toBe(7 * DAY);
    const [requestLog, responseLog] = await Promise.all([h.blob(alice, done.openAIRequestPayloadUrl!), h.blob(alice, done.openAIResponsePayloadUrl!)]);
    expect((JSON.parse(requestLog.text) as unknown[])[0]).toMatchObject({ model: 'gpt-4.1-mini', instructions: 'You are a careful refactoring assistant.', stream: true });
    expect((JSON.parse(responseLog.text) as { response: { id: string } }[])[0]?.response.id).toBe(done.openAIResponseId);
  });

  it('answers execute with the full text (never truncated), streams it gap-free, and ends the stream', async () => {
    const answer = `${'line of the answer\n'.repeat(200)}end`;
    h.fake.enqueue({ kind: 'text', chunks: answer.match(/[\s\S]{1,97}/g) ?? [] });
    const res = await h.execute(alice, { instruction: 'Write a long answer' });
    const final = res.body.data!.execute;
    expect(final).toMatchObject({ __typename: 'AgentFinalResponse', kind: 'FINAL', modeDisplayName: 'Ask', files: null, toolResults: null, userWarnings: null });
    expect(final.primaryOutputText).toBe(answer);
    const streamed = h.output.of(final.turnId);
    expect(streamed.text).toBe(answer);
    expect(streamed.indexes).toEqual(streamed.indexes.map((_, i) => i));
    expect(streamed.ends).toBe(1);
  });

  it('fails a turn with a readable error and tells the caller which turn (extensions.code, sessionId, turnId)', async () => {
    h.fake.enqueue({ kind: 'http_error', status: 400, message: "Invalid value for 'temperature'." });
    const res = await h.execute(alice, { ...conversation(), instruction: 'This will be refused' });
    const error = res.body.errors?.[0];
    expect(error?.message).toBe("the model provider rejected the request (HTTP 400): Invalid value for 'temperature'.");
    expect(error?.extensions).toMatchObject({ code: 'LLM_FAILED' });
    const { sessionId, turnId } = error?.extensions as { sessionId: string; turnId: string };
    const failed = await h.turn(alice, sessionId, turnId);
    expect(failed).toMatchObject({ status: 'FAILED', errors: [error?.message], agentAnswerSummary: null, fullAgentAnswerUrl: null });
    expect(failed.openAIResponseReceivedDate).not.toBeNull();
    expect(JSON.parse((await h.blob(alice, failed.openAIRequestPayloadUrl!)).text)).toHaveLength(1);
    expect(JSON.parse((await h.blob(alice, failed.openAIResponsePayloadUrl!)).text)).toEqual([{ streamedDeltas: 0, error: error?.message }]);
  });

  it('reports a provider that hangs as LLM_TIMEOUT and fails the turn', async () => {
    const quick = await startGateway({ ...EXECUTE_SETUP, database, provider: h.fake, env: { LLM_TIMEOUT_MS: '300', LLM_MAX_RETRIES: '0' } });
    try {
      quick.fake.enqueue({ kind: 'hang' });
      const res = await quick.execute(alice, { instruction: 'Hang please' });
      expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'LLM_TIMEOUT' });
      const { sessionId, turnId } = res.body.errors?.[0]?.extensions as { sessionId: string; turnId: string };
      expect(await quick.turn(alice, sessionId, turnId)).toMatchObject({ status: 'FAILED', errors: ['the model did not finish answering within 300 ms'] });
    } finally {
      await quick.close();
    }
  });

  it('chains follow-ons with previous_response_id and re-sends neither unchanged files nor known snippets', async () => {
    const fileA = 'export const a = 1;\n';
    h.retriever.chunks = [chunk('alpha'), chunk('beta')];
    const first = (
      await h.execute(alice, {
        ...conversation(),
        instruction: 'First',
        activeFiles: [{ path: 'a.ts', content: fileA }, { path: 'b.ts', content: 'b1' }, { path: 'c.ts', content: 'const c = 3;' }],
      })
    ).body.data!.execute;
    const firstTurn = await h.turn(alice, first.sessionId, first.turnId);
    expect(firstTurn.chunkRefs.map((c) => c.chunkId)).toEqual(['alpha', 'beta']);
    expect(userTextOf(h.fake.requests[0]!.body)).toContain('text of alpha');

    h.retriever.chunks = [chunk('beta'), chunk('gamma')];
    const second = (
      await h.execute(alice, {
        ...conversation(),
        sessionId: first.sessionId,
        instruction: 'Second',
        // a.ts unchanged (sent as content again), b.ts changed, c.ts unchanged and sent as path + hash only.
        activeFiles: [{ path: 'a.ts', content: fileA }, { path: 'b.ts', content: 'b2' }, { path: 'c.ts', contentHash: sha('const c = 3;') }],
      })
    ).body.data!.execute;
    const body = h.fake.requests[1]!.body;
    expect(body.previous_response_id).toBe(firstTurn.openAIResponseId);
    const sent = userTextOf(body);
    expect(sent).not.toContain('export const a = 1;');
    expect(sent).toContain('### b.ts');
    expect(sent).not.toContain('const c = 3;');
    expect(sent).toContain('Unchanged since you last saw them in this conversation: a.ts, c.ts.');
    expect(sent).not.toContain('text of beta');
    expect(sent).toContain('text of gamma');
    expect((body.input as unknown[]).length).toBe(1);
    const secondTurn = await h.turn(alice, second.sessionId, second.turnId);
    expect(secondTurn.previousOpenAIResponseId).toBe(firstTurn.openAIResponseId);
    expect(secondTurn.conversationId).toBe(firstTurn.conversationId);
    expect(secondTurn.chunkRefs.map((c) => c.chunkId)).toEqual(['beta', 'gamma']);
    expect(secondTurn.activeFileRefs.map((f) => [f.path, f.wasSentToLLM])).toEqual([
      ['a.ts', false],
      ['b.ts', true],
      ['c.ts', false],
    ]);
    // The chain keeps its first link's expiry.
    expect(secondTurn.openAIChainExpiresDate).toBe(firstTurn.openAIChainExpiresDate);
  });

  it('starts a new chain once OPENAI_CHAIN_TTL_SECONDS has passed (clock moved forward)', async () => {
    const first = (await h.execute(alice, { instruction: 'Before the expiry' })).body.data!.execute;
    const firstTurn = await h.turn(alice, first.sessionId, first.turnId);
    h.clock.advance(7 * DAY - 60_000);
    await h.execute(alice, { sessionId: first.sessionId, instruction: 'Still alive' });
    expect(h.fake.requests[1]?.body.previous_response_id).toBe(firstTurn.openAIResponseId);
    h.clock.advance(2 * 60_000);
    const late = (await h.execute(alice, { sessionId: first.sessionId, instruction: 'After the expiry' })).body.data!.execute;
    expect(h.fake.requests[2]?.body).not.toHaveProperty('previous_response_id');
    expect((h.fake.requests[2]?.body.input as unknown[]).length).toBe(5);
    expect(late.userWarnings?.[0]).toMatch(/^The session's model conversation expired on .*; this turn starts a new model conversation preloaded from the session history\.$/);
  });

  it('records a file over 100 KB without sending it, and warns the user', async () => {
    const big = 'x'.repeat(100 * 1024 + 1);
    const res = (await h.execute(alice, { instruction: 'Look at the big file', activeFiles: [{ path: 'big.json', content: big, isTouched: false }] })).body.data!.execute;
    expect(res.userWarnings).toEqual([`big.json (${100 * 1024 + 1} bytes) is larger than 100 KB and was not sent to the model.`]);
    const sent = userTextOf(h.fake.requests[0]!.body);
    expect(sent).not.toContain('xxxxxxxxxx');
    expect(sent).toContain('Not included because they are larger than 100 KB: big.json');
    const turn = await h.turn(alice, res.sessionId, res.turnId);
    expect(turn.activeFileRefs).toEqual([
      { path: 'big.json', contentHash: sha(big), sizeBytes: 100 * 1024 + 1, isTouched: false, wasSentToLLM: false, wasTooLargeToSend: true },
    ]);
  });

  it('refuses bad active files before anything is written', async () => {
    const before = h.fake.requests.length;
    const res = await h.execute(alice, { instruction: 'xyzzy', activeFiles: [{ path: 'a.ts', content: 'abc', contentHash: sha('abd') }] });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = await h.execute(alice, { instruction: 'xyzzy', activeFiles: [{ path: 'a.ts', contentHash: sha('never seen') }] });
    expect(unknown.body.errors?.[0]?.message).toContain('has no earlier version');
    expect(h.fake.requests.length).toBe(before);
    const sessions = await h.gateway.services.sessions.listSessions(alice, { search: 'xyzzy' }, 'LAST_UPDATED_DESC', { first: 10, after: null });
    expect(sessions.items.filter((s) => s.name === 'xyzzy')).toEqual([]);
  });

  it('estimates usage as ceil(chars/4) when the provider reports none, and sums a session', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['12345678'], usage: null });
    const first = (await h.execute(alice, { instruction: 'Estimate me' })).body.data!.execute;
    expect(first.usage).toMatchObject({ outputTokens: 2, isEstimated: true });
    expect(first.usage!.inputTokens).toBe(Math.ceil(userTextOf(h.fake.requests[0]!.body).length / 4));
    h.fake.enqueue({ kind: 'text', chunks: ['ok'], usage: { input: 100, output: 10 } });
    const second = (await h.execute(alice, { sessionId: first.sessionId, instruction: 'Count me' })).body.data!.execute;
    const res = await h.gql<{ agentSession: { usage: Record<string, unknown> } }>(h.tokenOf(alice), `query($id: ID!) { agentSession(id: $id) { usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated } } }`, { id: first.sessionId });
    const a = first.usage!;
    const b = second.usage!;
    expect(res.body.data?.agentSession.usage).toEqual({
      inputTokens: a.inputTokens + 100,
      outputTokens: a.outputTokens + 10,
      totalTokens: a.totalTokens + 110,
      estimatedCostUsd: Math.round(((a.estimatedCostUsd ?? 0) + (b.estimatedCostUsd ?? 0)) * 1e6) / 1e6,
      isEstimated: true,
    });
    expect(b.estimatedCostUsd).toBe(0.07);
  });

  it('keeps working when retrieval fails, and says so', async () => {
    h.retriever.failWith = new Error('qdrant is down');
    const res = (await h.execute(alice, { instruction: 'Search anyway' })).body.data!.execute;
    expect(res.userWarnings).toEqual(['Repository search was unavailable, so this answer uses no retrieved snippets.']);
    expect(h.retriever.requests.at(-1)).toMatchObject({ orgId: 'acme', collection: 'backend', query: 'Search anyway', limit: 8 });
    h.retriever.failWith = new RetrievalError('collection-missing', 'vector collection "backend" has not been indexed yet');
    const unindexed = (await h.execute(alice, { instruction: 'Search an empty index' })).body.data!.execute;
    expect(unindexed.userWarnings).toEqual([
      'Repository search was unavailable (vector collection "backend" has not been indexed yet), so this answer uses no retrieved snippets.',
    ]);
  });

  it('picks the model from the conversation context, else the agent context', async () => {
    const { contexts } = h.gateway.services;
    const special = await contexts.upsertConversationContext({ ...alice, roles: ['admin'] }, { name: 'Special', systemPrompt: 'Be brief.', model: 'gpt-4.1' });
    const res = (await h.execute(alice, { conversationContextId: special.id, instruction: 'Which model?' })).body.data!.execute;
    expect(h.fake.requests[0]?.body.model).toBe('gpt-4.1');
    expect((await h.turn(alice, res.sessionId, res.turnId)).openAIModel).toBe('gpt-4.1');
    await h.execute(alice, { instruction: 'And now?' });
    expect(h.fake.requests[1]?.body.model).toBe('gpt-4.1-mini');
  });

  it('uses an agent context changed on this instance from the next execute on', async () => {
    const { contexts } = h.gateway.services;
    const admin = { ...alice, roles: ['admin'] };
    const [before] = await contexts.agentContextsByIds(alice.orgId, [h.agentContextId]);
    const draft = { id: h.agentContextId, name: before!.name, description: before!.description, vectorCollection: before!.vectorCollection };
    await h.execute(alice, { instruction: 'Which model?' });
    await contexts.upsertAgentContext(admin, { ...draft, defaultModel: 'gpt-4.1' });
    try {
      await h.execute(alice, { instruction: 'And after the change?' });
      expect(h.fake.requests.map((r) => r.body.model)).toEqual([before!.defaultModel, 'gpt-4.1']);
    } finally {
      await contexts.upsertAgentContext(admin, { ...draft, defaultModel: before!.defaultModel });
    }
  });

  it('refuses a follow-on in another agent context or an unknown session', async () => {
    const first = (await h.execute(alice, { instruction: 'Anchor' })).body.data!.execute;
    const wrong = await h.execute(alice, { sessionId: first.sessionId, agentContextId: 'no-such-context', instruction: 'x' });
    expect(wrong.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const mismatch = await h.execute(alice, { sessionId: first.sessionId, conversationContextId: h.conversationContextId, instruction: 'x' });
    expect(mismatch.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'conversationContextId' });
    const missing = await h.execute(alice, { sessionId: '00000000-0000-0000-0000-000000000000', instruction: 'x' });
    expect(missing.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
}

describeWithMysql('execute turn lifecycle on MariaDB', () => lifecycleSuite('mysql'));
describe('execute turn lifecycle on embedded SQLite', () => lifecycleSuite('sqlite'));

import { createHash } from 'node:crypto';
import { describeWithMysql } from '../support/services';
import { alice, chunk, eventually, EXECUTE_SETUP, startGateway, userTextOf, type TestGateway } from '../support/testkit';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const DAY = 24 * 3600 * 1000;

const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    id status conversationId openAIResponseId previousOpenAIResponseId openAIChainRestartReason warnings
    fullAgentAnswerUrl retrievalPathPrefixes openAIRequestPayloadUrl openAIResponsePayloadUrl
    chunkRefs { chunkId }
    skippedSnippets { chunkId path reason }
    activeFileRefs { path contentHash sizeBytes wasSentToLLM wasTooLargeToSend }
  }
}`;
const CANCEL = `mutation Cancel($sessionId: ID!, $turnId: ID!) { cancelTurn(sessionId: $sessionId, turnId: $turnId) { status } }`;
const RERUN = `mutation Rerun($sessionId: ID!, $turnId: ID!, $activeFiles: [ActiveFileInput!], $retrievalPathPrefixes: [String!]) {
  rerunTurn(sessionId: $sessionId, turnId: $turnId, activeFiles: $activeFiles, retrievalPathPrefixes: $retrievalPathPrefixes) {
    ... on AgentFinalResponse { sessionId turnId }
  }
}`;

interface ChainTurn {
  id: string;
  status: string;
  conversationId: string | null;
  openAIResponseId: string | null;
  previousOpenAIResponseId: string | null;
  openAIChainRestartReason: string | null;
  warnings: string[];
  fullAgentAnswerUrl: string | null;
  openAIRequestPayloadUrl: string | null;
  openAIResponsePayloadUrl: string | null;
  retrievalPathPrefixes: string[] | null;
  chunkRefs: { chunkId: string }[];
  skippedSnippets: { chunkId: string; path: string; reason: string }[];
  activeFileRefs: { path: string; contentHash: string; sizeBytes: number; wasSentToLLM: boolean; wasTooLargeToSend: boolean }[];
}

type Input = { type?: string; role?: string; content?: string }[];

/** Issue 10 items 1, 2 and 7 end to end: execute over GraphQL against the Responses API stand-in. */
function chainSuite(database: 'sqlite' | 'mysql'): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database, env: { OPENAI_CHAIN_TTL_SECONDS: String(7 * 24 * 3600), LLM_MAX_RETRIES: '0' } });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
    h.retriever.chunks = [];
  });

  const turn = async (sessionId: string, turnId: string): Promise<ChainTurn> => {
    const res = await h.gql<{ agentSessionTurn: ChainTurn }>(h.tokenOf(alice), TURN, { sessionId, turnId });
    if (!res.body.data?.agentSessionTurn) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data.agentSessionTurn;
  };
  const run = async (input: Record<string, unknown>) => {
    const res = await h.execute(alice, input);
    if (!res.body.data) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data.execute;
  };

  it('retries a turn whose chain the provider lost on a new chain preloaded from history, inside the same turn', async () => {
    const first = await run({ instruction: 'Remember the number 42', activeFiles: [{ path: 'n.txt', content: 'forty-two' }] });
    const second = await run({ sessionId: first.sessionId, instruction: 'And the colour blue' });
    const lostTurn = await turn(second.sessionId, second.turnId);
    h.fake.forget(lostTurn.openAIResponseId!);
    h.fake.requests.length = 0;

    const third = await run({ sessionId: first.sessionId, instruction: 'What were the number and the colour?' });
    expect(third.kind).toBe('FINAL');
    expect(third.userWarnings).toEqual(["The model provider no longer knew this session's conversation, so this turn starts a new model conversation preloaded from the session history."]);
    expect(h.fake.requests).toHaveLength(2);
    expect(h.fake.requests[0]!.body.previous_response_id).toBe(lostTurn.openAIResponseId);
    const retry = h.fake.requests[1]!.body;
    expect(retry).not.toHaveProperty('previous_response_id');
    const input = retry.input as Input;
    expect(input.map((i) => i.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(input[0]?.content).toBe('Remember the number 42');
    expect(input[2]?.content).toBe('And the colour blue');
    // The latest version of every active file comes back from the gateway's store.
    expect(input[4]?.content).toContain('forty-two');
    expect(input[4]?.content).toContain('What were the number and the colour?');

    const recovered = await turn(third.sessionId, third.turnId);
    expect(recovered).toMatchObject({ status: 'COMPLETED', openAIChainRestartReason: 'LOST_BY_PROVIDER', previousOpenAIResponseId: null, conversationId: third.turnId });
    expect(recovered.activeFileRefs).toEqual([{ path: 'n.txt', contentHash: sha('forty-two'), sizeBytes: 9, wasSentToLLM: true, wasTooLargeToSend: false }]);
    // Both attempts stay in the turn's payload logs.
    const requests = JSON.parse((await h.blob(alice, recovered.openAIRequestPayloadUrl!)).text) as Record<string, unknown>[];
    expect(requests.map((r) => r.previous_response_id ?? null)).toEqual([lostTurn.openAIResponseId, null]);
    const responses = JSON.parse((await h.blob(alice, recovered.openAIResponsePayloadUrl!)).text) as { error?: string; response?: { id: string } }[];
    expect(responses[0]?.error).toBe('the model provider no longer knows the previous response (HTTP 400)');
    expect(responses[1]?.response?.id).toBe(recovered.openAIResponseId);
    expect((await turn(first.sessionId, first.turnId)).openAIChainRestartReason).toBe('FIRST_TURN');
    expect(lostTurn.openAIChainRestartReason).toBeNull();

    h.fake.requests.length = 0;
    const fourth = await run({ sessionId: first.sessionId, instruction: 'Thanks' });
    expect(h.fake.requests[0]!.body.previous_response_id).toBe(recovered.openAIResponseId);
    expect((await turn(fourth.sessionId, fourth.turnId)).openAIChainRestartReason).toBeNull();
  });

  it('recovers a tool continuation whose chain the provider lost: the new chain carries the calls and their outputs', async () => {
    const conversationContextId = h.conversationContextId;
    const first = await run({ conversationContextId, instruction: 'Remember the number 42', activeFiles: [{ path: 'n.txt', content: 'forty-two' }] });
    h.fake.enqueue({ kind: 'tool_calls', text: 'Let me read it.', calls: [{ name: 'read_file', arguments: '{"path":"a.ts"}' }] });
    const paused = await run({ sessionId: first.sessionId, conversationContextId, instruction: 'Read a.ts' });
    expect(paused.kind).toBe('CLIENT_TOOL_CONTINUATION');
    const call = paused.toolCalls![0]!;
    h.fake.forget((await turn(paused.sessionId, paused.turnId)).openAIResponseId!);
    h.fake.requests.length = 0;

    const done = await run({
      sessionId: paused.sessionId,
      turnId: paused.turnId,
      toolResults: [{ toolCallId: call.toolCallId, executionMs: 3, resultJson: '{"text":"export const a = 1;"}' }],
    });
    expect(done.kind).toBe('FINAL');
    expect(h.fake.requests).toHaveLength(2);
    const retry = h.fake.requests[1]!.body;
    expect(retry).not.toHaveProperty('previous_response_id');
    const input = retry.input as { type?: string; role?: string; content?: string; call_id?: string; name?: string; arguments?: string; output?: string }[];
    expect(input.map((i) => i.role ?? i.type)).toEqual(['user', 'assistant', 'user', 'function_call', 'function_call_output']);
    expect(input[0]?.content).toBe('Remember the number 42');
    expect(input[2]?.content).toContain('Read a.ts');
    expect(input[2]?.content).toContain('forty-two');
    expect(input[3]).toMatchObject({ call_id: call.toolCallId, name: 'read_file', arguments: '{"path":"a.ts"}' });
    expect(input[4]).toMatchObject({ call_id: call.toolCallId });
    expect(input[4]?.output).toContain('export const a = 1;');

    const recovered = await turn(done.sessionId, done.turnId);
    expect(recovered).toMatchObject({ status: 'COMPLETED', openAIChainRestartReason: 'LOST_BY_PROVIDER', previousOpenAIResponseId: null, conversationId: done.turnId });
    h.fake.requests.length = 0;
    await run({ sessionId: first.sessionId, conversationContextId, instruction: 'Thanks' });
    expect(h.fake.requests[0]!.body.previous_response_id).toBe(recovered.openAIResponseId);
  });

  it('continues from the last completed response after a FAILED turn, and says NO_USABLE_PREVIOUS_RESPONSE when none completed', async () => {
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'Refused.' });
    const failedFirst = await h.execute(alice, { instruction: 'Fails at once' });
    const sessionId = (failedFirst.body.errors?.[0]?.extensions as { sessionId: string }).sessionId;
    const first = await run({ sessionId, instruction: 'Works now' });
    expect((await turn(sessionId, first.turnId)).openAIChainRestartReason).toBe('NO_USABLE_PREVIOUS_RESPONSE');
    const firstTurn = await turn(sessionId, first.turnId);

    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'Refused again.' });
    expect((await h.execute(alice, { sessionId, instruction: 'This one fails' })).body.errors?.[0]?.extensions?.code).toBe('LLM_FAILED');
    h.fake.requests.length = 0;
    const after = await run({ sessionId, instruction: 'Carry on' });
    expect(h.fake.requests[0]!.body.previous_response_id).toBe(firstTurn.openAIResponseId);
    expect((h.fake.requests[0]!.body.input as Input).length).toBe(1);
    expect(after.userWarnings).toBeNull();
    expect(await turn(sessionId, after.turnId)).toMatchObject({ openAIChainRestartReason: null, conversationId: firstTurn.conversationId });
  });

  it('after a CANCELLED turn continues the chain and tells the model the previous answer was interrupted, with its partial text', async () => {
    const first = await run({ instruction: 'Plan the migration' });
    const firstTurn = await turn(first.sessionId, first.turnId);
    h.fake.enqueue({ kind: 'stall', chunks: ['Step 1: back up ', 'the database'] });
    const started = (await h.executeAsync(alice, { sessionId: first.sessionId, instruction: 'Write the detailed steps' })).body.data!.executeAsync;
    await eventually(() => h.output.of(started.turnId).text === 'Step 1: back up the database');
    await h.gql(h.tokenOf(alice), CANCEL, { sessionId: started.sessionId, turnId: started.turnId });
    await h.waitForTurn(alice, started.sessionId, started.turnId);
    h.fake.requests.length = 0;

    await run({ sessionId: first.sessionId, instruction: 'Go on' });
    const body = h.fake.requests[0]!.body;
    expect(body.previous_response_id).toBe(firstTurn.openAIResponseId);
    const input = body.input as Input;
    expect(input).toHaveLength(2);
    expect(input[0]?.content).toContain('Your previous answer in this session was interrupted');
    expect(input[0]?.content).toContain('Write the detailed steps');
    expect(input[0]?.content).toContain('Step 1: back up the database');
    expect(userTextOf(body)).toContain('Go on');
  });

  it('preloads the newest exchanges in full and older ones as their stored summaries when the chain expired', async () => {
    const long = `Describe the billing module. ${'Very long context. '.repeat(200)}`;
    const first = await run({ instruction: long });
    for (const n of [2, 3, 4, 5]) await run({ sessionId: first.sessionId, instruction: `Question ${n}` });
    h.clock.advance(8 * DAY);
    h.fake.requests.length = 0;
    const late = await run({ sessionId: first.sessionId, instruction: 'After the expiry' });
    const input = h.fake.requests[0]!.body.input as Input;
    expect(input).toHaveLength(11);
    expect(input[0]?.content).toBe(`(Summary of an earlier instruction of this session)\n\n${long.trim().slice(0, 1024)}`);
    expect(input[2]?.content).toBe('Question 2');
    expect((await turn(late.sessionId, late.turnId)).openAIChainRestartReason).toBe('EXPIRED');
  });

  it('leaves out indexed snippets of active files the model holds, records them as skipped, and says the active file is current', async () => {
    h.retriever.chunks = [chunk('alpha'), chunk('beta')];
    const first = await run({ instruction: 'Refactor alpha', activeFiles: [{ path: 'src/alpha.ts', content: 'export const alpha = 2;' }] });
    const sent = userTextOf(h.fake.requests[0]!.body);
    expect(sent).toContain('export const alpha = 2;');
    expect(sent).not.toContain('text of alpha');
    expect(sent).toContain('text of beta');
    expect(sent).toContain('These active files are the current versions (local edits): where retrieved context shows the same path, the active file wins.');
    expect(sent).toContain('Indexed snippets of src/alpha.ts were left out for that reason.');
    const firstTurn = await turn(first.sessionId, first.turnId);
    expect(firstTurn.skippedSnippets).toEqual([{ chunkId: 'alpha', path: 'src/alpha.ts', reason: 'ACTIVE_FILE_IS_CURRENT' }]);
    expect(firstTurn.chunkRefs.map((c) => c.chunkId)).toEqual(['beta']);

    // Sent earlier in the live chain and unchanged: still the current version.
    h.fake.requests.length = 0;
    const second = await run({ sessionId: first.sessionId, instruction: 'Again', activeFiles: [{ path: 'src/alpha.ts', contentHash: sha('export const alpha = 2;') }] });
    const again = userTextOf(h.fake.requests[0]!.body);
    expect(again).not.toContain('text of alpha');
    expect(again).toContain('Unchanged since you last saw them in this conversation: src/alpha.ts.');
    expect((await turn(second.sessionId, second.turnId)).skippedSnippets.map((s) => s.chunkId)).toEqual(['alpha']);
  });

  it('takes a file over 100 KB as metadata only (path, contentHash, sizeBytes), records it as skipped, and never needs its content', async () => {
    const hash = sha('a very large generated file');
    const res = await run({ instruction: 'Note the big file', activeFiles: [{ path: 'gen/big.json', contentHash: hash, sizeBytes: 250_000 }] });
    expect(res.userWarnings).toEqual(['gen/big.json (250000 bytes) is larger than 100 KB and was not sent to the model.']);
    expect(userTextOf(h.fake.requests[0]!.body)).toContain('Not included because they are larger than 100 KB: gen/big.json');
    expect((await turn(res.sessionId, res.turnId)).activeFileRefs).toEqual([
      { path: 'gen/big.json', contentHash: hash, sizeBytes: 250_000, wasSentToLLM: false, wasTooLargeToSend: true },
    ]);
    const small = await h.execute(alice, { instruction: 'x', activeFiles: [{ path: 'small.ts', contentHash: sha('never seen'), sizeBytes: 10 }] });
    expect(small.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(small.body.errors?.[0]?.message).toContain('has no earlier version');
  });

  it("accepts turnId with a new instruction when it names the session's latest finished turn, and refuses any other without changing anything", async () => {
    const first = await run({ instruction: 'One' });
    const second = await run({ sessionId: first.sessionId, turnId: first.turnId, instruction: 'Two, following one' });
    expect(second.kind).toBe('FINAL');
    const before = h.fake.requests.length;
    const stale = await h.execute(alice, { sessionId: first.sessionId, turnId: first.turnId, instruction: 'Three, following one again' });
    expect(stale.body.errors?.[0]?.extensions).toMatchObject({ code: 'TURN_NOT_LATEST', turnId: first.turnId, field: 'turnId' });
    const unknown = await h.execute(alice, { sessionId: first.sessionId, turnId: 'no-such-turn', instruction: 'Three' });
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('TURN_NOT_LATEST');
    expect(h.fake.requests.length).toBe(before);
    const session = await h.gateway.services.sessions.getSession(alice, first.sessionId);
    expect(session?.turnCount).toBe(2);
  });

  it('reruns a turn with updated active files and a new retrieval scope, stored with the new turn', async () => {
    const first = await run({ instruction: 'Review it', activeFiles: [{ path: 'r.ts', content: 'const r = 1;' }], retrievalPathPrefixes: ['./ui/primitives/', 'src'] });
    expect((await turn(first.sessionId, first.turnId)).retrievalPathPrefixes).toEqual(['ui/primitives', 'src']);
    expect(h.retriever.requests.at(-1)?.pathPrefixes).toEqual(['ui/primitives', 'src']);
    h.fake.requests.length = 0;
    const res = await h.gql<{ rerunTurn: { sessionId: string; turnId: string } }>(h.tokenOf(alice), RERUN, {
      sessionId: first.sessionId,
      turnId: first.turnId,
      activeFiles: [{ path: 'r.ts', content: 'const r = 2;' }],
      retrievalPathPrefixes: ['ui'],
    });
    const rerun = res.body.data!.rerunTurn;
    expect(userTextOf(h.fake.requests[0]!.body)).toContain('const r = 2;');
    expect(h.retriever.requests.at(-1)?.pathPrefixes).toEqual(['ui']);
    const rerunTurn = await turn(rerun.sessionId, rerun.turnId);
    expect(rerunTurn.retrievalPathPrefixes).toEqual(['ui']);
    expect(rerunTurn.activeFileRefs.map((f) => f.contentHash)).toEqual([sha('const r = 2;')]);

    const bad = await h.execute(alice, { instruction: 'x', retrievalPathPrefixes: ['../etc'] });
    expect(bad.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'retrievalPathPrefixes' });
  });
}

describeWithMysql('chains that recover, local edits that win, and the smaller execute rules on MariaDB', () => chainSuite('mysql'));
describe('chains that recover, local edits that win, and the smaller execute rules on embedded SQLite', () => chainSuite('sqlite'));

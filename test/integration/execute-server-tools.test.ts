import { createHash } from 'node:crypto';
import { describeWithMysql } from '../support/services';
import { alice, bob, chunk, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    __typename
    ... on AgentFinalResponse {
      kind turnId sessionId primaryOutputText userWarnings
      files { name mimeType url sizeBytes contentHash }
      toolResults { toolCallId executionMs resultJson errorMessage }
    }
    ... on AgentToolContinuation { kind sessionId turnId toolCalls { toolCallId name argumentsJson } }
  }
}`;

const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    status warnings errors chunkRefs { chunkId }
    files { name mimeType url sizeBytes contentHash }
  }
}`;

interface FileView {
  name: string;
  mimeType: string;
  url: string;
  sizeBytes: number;
  contentHash: string;
}

interface Final {
  __typename: 'AgentFinalResponse' | 'AgentToolContinuation';
  kind: string;
  turnId: string;
  sessionId: string;
  primaryOutputText?: string;
  userWarnings?: string[] | null;
  files?: FileView[] | null;
  toolResults?: { toolCallId: string; executionMs: number; resultJson: string | null; errorMessage: string | null }[] | null;
  toolCalls?: { toolCallId: string; name: string; argumentsJson: string }[];
}

/** A recorded provider request's function_call_output items. */
const outputsOf = (body: Record<string, unknown>) =>
  (body.input as { type: string; call_id?: string; output?: string }[]).filter((i) => i.type === 'function_call_output');

const toolNames = (body: Record<string, unknown>) => ((body.tools ?? []) as { name: string }[]).map((t) => t.name);

/**
 * Issue 10 item 4: the gateway's own tools (write_file, search_code) run in a bounded loop
 * next to the client's, end to end through execute against the Responses API stand-in.
 */
function serverToolsSuite(mysql: boolean): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: mysql ? 'mysql' : 'sqlite', env: { MAX_SERVER_TOOL_ROUNDS: '2' } });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
    h.retriever.chunks = [];
    h.retriever.requests.length = 0;
  });

  const execute = async (input: Record<string, unknown>, caller = alice): Promise<Final> => {
    const res = await h.gql<{ execute: Final }>(h.tokenOf(caller), EXECUTE, {
      input: { agentContextId: h.agentContextId, conversationContextId: h.conversationContextId, ...input },
    });
    if (!res.body.data) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data.execute;
  };
  const turnOf = async (answer: Final) =>
    (await h.gql<{ agentSessionTurn: { status: string; warnings: string[]; errors: string[]; chunkRefs: { chunkId: string }[]; files: FileView[] } }>(
      h.tokenOf(alice),
      TURN,
      { sessionId: answer.sessionId, turnId: answer.turnId },
    )).body.data!.agentSessionTurn;

  it('write_file stores the content as a blob, answers the model, and returns a FileRef only readers of the session can fetch', async () => {
    const content = `# Plan\n\nStep 1: rename — ünïcode ✓\n${'line\n'.repeat(200)}`;
    h.fake.enqueue(
      { kind: 'tool_calls', text: 'Writing the plan. ', calls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'docs/plan.md', content }) }] },
      { kind: 'text', chunks: ['The plan is in docs/plan.md.'] },
    );
    const answer = await execute({ instruction: 'Write a plan file' });
    expect(answer).toMatchObject({ kind: 'FINAL', primaryOutputText: 'Writing the plan. The plan is in docs/plan.md.' });
    const size = Buffer.byteLength(content, 'utf8');
    const file = answer.files?.[0] as FileView;
    expect(answer.files).toEqual([
      { name: 'docs/plan.md', mimeType: 'text/markdown; charset=utf-8', url: expect.stringMatching(/^\/blobs\/sessions\//), sizeBytes: size, contentHash: sha(content) },
    ]);
    // The model got the tool's output on the response that asked, and the final response shows it.
    const [first, second] = h.fake.requests.map((r) => r.body);
    expect(toolNames(first!)).toEqual(['read_file', 'write_file', 'search_code']);
    const call = outputsOf(second!)[0]!;
    expect(JSON.parse(call.output!)).toEqual({ written: 'docs/plan.md', sizeBytes: size, contentHash: sha(content) });
    expect(second!.previous_response_id).toEqual(expect.stringMatching(/^resp_/));
    expect(answer.toolResults).toEqual([{ toolCallId: call.call_id, executionMs: expect.any(Number), resultJson: call.output, errorMessage: null }]);
    expect(answer.toolResults![0]!.executionMs).toBeGreaterThanOrEqual(0);
    // Kept with the turn, fetched back over HTTP with the caller's token, byte for byte.
    expect((await turnOf(answer)).files).toEqual(answer.files);
    const fetched = await fetch(`${h.url}${file.url}`, { headers: { authorization: `Bearer ${h.tokenOf(alice)}` } });
    expect(fetched.status).toBe(200);
    const bytes = Buffer.from(await fetched.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.contentHash);
    expect(bytes.toString('utf8')).toBe(content);
    // Someone who may not read the session gets 404, as for a blob that does not exist; nobody gets 401.
    expect((await h.blob(bob, file.url)).status).toBe(404);
    expect((await h.blob(null, file.url)).status).toBe(401);
  });

  it('answers the same files and server tool results over REST (AGN-033 JSON)', async () => {
    h.fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'write_file', arguments: '{"path":"r.txt","content":"rest"}' }] },
      { kind: 'text', chunks: ['Via REST.'] },
    );
    const res = await h.rest(alice, { agentContextId: h.agentContextId, conversationContextId: h.conversationContextId, instruction: 'Write r.txt', clientKind: 'CLI' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'final',
      primaryOutputText: 'Via REST.',
      files: [{ name: 'r.txt', mimeType: 'text/plain; charset=utf-8', sizeBytes: 4, contentHash: sha('rest'), url: expect.stringMatching(/^\/blobs\//) }],
      toolResults: [{ toolCallId: expect.any(String), executionMs: expect.any(Number), resultJson: expect.stringContaining('r.txt') }],
    });
    const [file] = res.body.files as FileView[];
    expect((await h.blob(alice, file!.url)).text).toBe('rest');
  });

  it('keeps the latest version of a path the model writes twice', async () => {
    h.fake.enqueue(
      {
        kind: 'tool_calls',
        calls: [
          { name: 'write_file', arguments: '{"path":"out.json","content":"{\\"v\\":1}"}' },
          { name: 'write_file', arguments: '{"path":"out.json","content":"{\\"v\\":2}"}' },
        ],
      },
      { kind: 'text', chunks: ['Rewritten.'] },
    );
    const answer = await execute({ instruction: 'Write twice' });
    expect(answer.files).toEqual([expect.objectContaining({ name: 'out.json', mimeType: 'application/json; charset=utf-8', contentHash: sha('{"v":2}') })]);
    expect((await h.blob(alice, answer.files![0]!.url)).text).toBe('{"v":2}');
    expect(answer.toolResults).toHaveLength(2);
  });

  it('search_code runs retrieval on demand in the session scope, below the path prefix the model asked for', async () => {
    h.retriever.chunks = [chunk('ui-button', 'export const Button = () => null;')];
    h.fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'search_code', arguments: '{"query":"Button component","pathPrefix":"src/ui/"}' }] },
      { kind: 'text', chunks: ['Found it.'] },
    );
    const answer = await execute({ instruction: 'Where is the button?', repo: 'web' });
    expect(answer.primaryOutputText).toBe('Found it.');
    const onDemand = h.retriever.requests.at(-1)!;
    expect(onDemand).toMatchObject({ orgId: 'acme', collection: 'backend', query: 'Button component', pathPrefix: 'src/ui', repo: 'web' });
    const output = JSON.parse(outputsOf(h.fake.requests[1]!.body)[0]!.output!) as { results: { path: string; text: string }[] };
    expect(output.results).toEqual([expect.objectContaining({ path: 'src/ui-button.ts', text: 'export const Button = () => null;' })]);
    expect((await turnOf(answer)).chunkRefs.map((c) => c.chunkId)).toContain('ui-button');
    expect(answer.files).toBeNull();
  });

  it.each([
    ['arguments that are not JSON', '{"path": "a.md", "content": ', /write_file: the arguments are not valid JSON/],
    ['a path that climbs out of the workspace', '{"path":"../../etc/passwd","content":"x"}', /must not contain "\." or "\.\." segments/],
    ['an absolute path', '{"path":"/etc/passwd","content":"x"}', /must be relative to the workspace/],
    ['content over 1 MB', JSON.stringify({ path: 'big.txt', content: 'x'.repeat(1_000_001) }), /at most 1000000 bytes/],
  ])('answers %s with an error result the model reads, and the turn completes', async (_what, args, message) => {
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'write_file', arguments: args }] }, { kind: 'text', chunks: ['Sorry.'] });
    const answer = await execute({ instruction: 'Write something' });
    expect(answer).toMatchObject({ kind: 'FINAL', primaryOutputText: 'Sorry.', files: null });
    expect(answer.toolResults?.[0]).toMatchObject({ resultJson: null, errorMessage: expect.stringMatching(message) });
    expect(JSON.parse(outputsOf(h.fake.requests[1]!.body)[0]!.output!)).toEqual({ error: answer.toolResults![0]!.errorMessage });
    expect((await turnOf(answer)).status).toBe('COMPLETED');
  });

  it('withdraws the server tools after MAX_SERVER_TOOL_ROUNDS rounds, so the model has to answer', async () => {
    const search = { kind: 'tool_calls' as const, calls: [{ name: 'search_code', arguments: '{"query":"retry"}' }] };
    h.fake.enqueue(search, search, { kind: 'text', chunks: ['Answer without more searching.'] });
    const answer = await execute({ instruction: 'Keep searching' });
    expect(answer.primaryOutputText).toBe('Answer without more searching.');
    expect(h.fake.requests.map((r) => toolNames(r.body))).toEqual([
      ['read_file', 'write_file', 'search_code'],
      ['read_file', 'write_file', 'search_code'],
      ['read_file'],
    ]);
    expect(answer.toolResults).toHaveLength(2);
    expect(answer.userWarnings).toContain('The model used all 2 server tool rounds; server tools were withdrawn for its answer.');
  });

  it('runs server tools on the new chain when the provider lost the old one, chaining each round onto the retry', async () => {
    const first = await execute({ instruction: 'Start' });
    const lost = (await h.turn(alice, first.sessionId, first.turnId)).openAIResponseId!;
    h.fake.forget(lost);
    h.fake.requests.length = 0;
    h.fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'write_file', arguments: '{"path":"after-restart.md","content":"again"}' }], usage: { input: 300, output: 10 } },
      { kind: 'text', chunks: ['Recovered and written.'], usage: { input: 350, output: 5 } },
    );
    const answer = await execute({ sessionId: first.sessionId, instruction: 'Write after the restart' });
    expect(answer).toMatchObject({ kind: 'FINAL', primaryOutputText: 'Recovered and written.' });
    expect(answer.files?.map((f) => f.name)).toEqual(['after-restart.md']);
    const [refused, retry, afterTool] = h.fake.requests.map((r) => r.body);
    expect(refused!.previous_response_id).toBe(lost);
    expect(retry).not.toHaveProperty('previous_response_id');
    expect(toolNames(retry!)).toEqual(['read_file', 'write_file', 'search_code']);
    expect(afterTool!.previous_response_id).toEqual(expect.stringMatching(/^resp_/));
    expect(outputsOf(afterTool!)).toHaveLength(1);
    // The refused attempt did no work; the two rounds that did are counted as reported.
    expect((await h.turn(alice, answer.sessionId, answer.turnId)).usage).toMatchObject({ inputTokens: 650, outputTokens: 15, isEstimated: false });
  });

  it('keeps the AGN-033 continuation when one response asks for a server tool and a client tool', async () => {
    h.fake.enqueue({
      kind: 'tool_calls',
      calls: [
        { name: 'write_file', arguments: '{"path":"notes.txt","content":"kept"}' },
        { name: 'read_file', arguments: '{"path":"a.ts"}' },
      ],
    });
    const paused = await execute({ instruction: 'Note and read' });
    expect(paused).toMatchObject({ kind: 'CLIENT_TOOL_CONTINUATION', toolCalls: [{ name: 'read_file', argumentsJson: '{"path":"a.ts"}' }] });
    h.fake.enqueue({ kind: 'text', chunks: ['Done.'] });
    const [clientCall] = paused.toolCalls!;
    const done = await execute({
      sessionId: paused.sessionId,
      turnId: paused.turnId,
      toolResults: [{ toolCallId: clientCall!.toolCallId, executionMs: 7, resultJson: '{"text":"A"}' }],
    });
    expect(done).toMatchObject({ kind: 'FINAL', primaryOutputText: 'Done.' });
    // Both outputs answer the response that asked for both calls (the stand-in refuses a missing one).
    const outputs = outputsOf(h.fake.requests[1]!.body);
    expect(outputs).toHaveLength(2);
    expect(JSON.parse(outputs[0]!.output!)).toMatchObject({ written: 'notes.txt' });
    expect(outputs[1]).toEqual({ type: 'function_call_output', call_id: clientCall!.toolCallId, output: '{"text":"A"}' });
    expect((await turnOf(done)).files.map((f) => f.name)).toEqual(['notes.txt']);
    expect(done.files?.map((f) => f.name)).toEqual(['notes.txt']);
  });
}

describeWithMysql('server tools on MariaDB', () => serverToolsSuite(true));
describe('server tools on embedded SQLite', () => serverToolsSuite(false));

import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { describeWithMysql } from '../support/services';
import { alice, bob, chunk, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';
import { subscribe, wsClient } from '../support/ws';

const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    ... on AgentFinalResponse { kind sessionId turnId primaryOutputText }
    ... on AgentToolContinuation { kind sessionId turnId toolCalls { toolCallId name } }
  }
}`;
const TOOL_CALLS = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    status pendingToolCalls { toolCallId }
    toolCalls { id name origin argumentsJson resultSummary executionMs status }
  }
}`;
const CANCEL = `mutation Cancel($sessionId: ID!, $turnId: ID!) { cancelTurn(sessionId: $sessionId, turnId: $turnId) { status } }`;
const OUTPUT = `subscription O($sessionId: ID!, $turnId: ID!) {
  turnOutput(sessionId: $sessionId, turnId: $turnId) { index textDelta toolCall { id name origin status resultSummary executionMs } }
}`;

interface Answer {
  kind: string;
  sessionId: string;
  turnId: string;
  primaryOutputText?: string;
  toolCalls?: { toolCallId: string; name: string }[];
}
interface ToolCallView {
  id: string;
  name: string;
  origin: 'SERVER' | 'CLIENT';
  argumentsJson: string;
  resultSummary: string | null;
  executionMs: number | null;
  status: string;
}
interface OutputItem {
  index: number;
  textDelta: string;
  toolCall: Omit<ToolCallView, 'argumentsJson'> | null;
}

/**
 * Issue 10 item 5 (spec 004 section 7): every tool call of a turn, server or client, kept as
 * a record after the turn ends, and published live in the turn's output stream.
 */
function auditSuite(mysql: boolean): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database: mysql ? 'mysql' : 'sqlite' });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
    h.retriever.chunks = [];
  });

  const execute = async (input: Record<string, unknown>): Promise<Answer> => {
    const res = await h.gql<{ execute: Answer }>(h.tokenOf(alice), EXECUTE, {
      input: { agentContextId: h.agentContextId, conversationContextId: h.conversationContextId, ...input },
    });
    if (!res.body.data) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data.execute;
  };
  const recordsOf = async (a: Answer) =>
    (await h.gql<{ agentSessionTurn: { status: string; toolCalls: ToolCallView[] } }>(h.tokenOf(alice), TOOL_CALLS, { sessionId: a.sessionId, turnId: a.turnId }))
      .body.data!.agentSessionTurn;

  /** A turn that wrote a file and now waits for the client's read_file. */
  async function mixed(): Promise<Answer> {
    h.fake.enqueue({
      kind: 'tool_calls',
      text: 'Noting. ',
      calls: [
        { name: 'write_file', arguments: '{"path":"notes.md","content":"# Notes"}' },
        { name: 'read_file', arguments: '{"path":"a.ts"}' },
      ],
    });
    return execute({ instruction: 'Take a note and read a.ts' });
  }

  it('records every call of the turn, server and client, with origin, arguments, result summary, time and status, and keeps them after it ends', async () => {
    const paused = await mixed();
    const waiting = await recordsOf(paused);
    const [server, client] = waiting.toolCalls;
    expect(waiting.toolCalls).toEqual([
      {
        id: expect.any(String),
        name: 'write_file',
        origin: 'SERVER',
        argumentsJson: '{"path":"notes.md","content":"# Notes"}',
        resultSummary: expect.stringContaining('"written":"notes.md"'),
        executionMs: expect.any(Number),
        status: 'COMPLETED',
      },
      { id: paused.toolCalls![0]!.toolCallId, name: 'read_file', origin: 'CLIENT', argumentsJson: '{"path":"a.ts"}', resultSummary: null, executionMs: null, status: 'WAITING_FOR_CLIENT' },
    ]);
    h.fake.enqueue({ kind: 'text', chunks: ['Done.'] });
    await execute({ sessionId: paused.sessionId, turnId: paused.turnId, toolResults: [{ toolCallId: client!.id, executionMs: 7, errorMessage: 'no such file' }] });
    const done = await recordsOf(paused);
    expect(done.status).toBe('COMPLETED');
    expect(done.toolCalls).toEqual([server, { ...client, resultSummary: 'no such file', executionMs: 7, status: 'FAILED' }]);

    // The stream carried each call as it started and ended, between the text, gap-free across both rounds.
    const items = h.output.deltas.filter((d) => d.turnId === paused.turnId);
    expect(items.map((d) => d.index)).toEqual(items.map((_, i) => i));
    expect(items.map((d) => (d.toolCall ? `${d.toolCall.name}:${d.toolCall.status}` : d.textDelta))).toEqual([
      'Noting. ',
      'write_file:RUNNING',
      'write_file:COMPLETED',
      'read_file:WAITING_FOR_CLIENT',
      'read_file:FAILED',
      'Done.',
    ]);
  });

  it('records a server call that failed on its arguments as FAILED, with the error the model received', async () => {
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'write_file', arguments: '{"path":"../x","content":"y"}' }] }, { kind: 'text', chunks: ['No.'] });
    const answer = await execute({ instruction: 'Escape' });
    const [record] = (await recordsOf(answer)).toolCalls;
    expect(record).toMatchObject({ name: 'write_file', origin: 'SERVER', status: 'FAILED', resultSummary: expect.stringContaining('".." segments') });
  });

  it('keeps at most 1,024 characters of a result and 4,096 of the arguments', async () => {
    h.retriever.chunks = [chunk('big', 'z'.repeat(3000))];
    h.fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'search_code', arguments: JSON.stringify({ query: 'q'.repeat(1500) }) }] },
      { kind: 'tool_calls', calls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'big.txt', content: 'w'.repeat(6000) }) }] },
      { kind: 'text', chunks: ['Ok.'] },
    );
    const answer = await execute({ instruction: 'Search and write' });
    const [search, write] = (await recordsOf(answer)).toolCalls;
    expect(search!.resultSummary).toHaveLength(1024);
    expect(search!.argumentsJson.length).toBeLessThanOrEqual(4096);
    expect(write!.argumentsJson).toHaveLength(4096);
    expect(write!.status).toBe('COMPLETED');
  });

  it('closes the calls a cancelled turn still waited on as ABANDONED, and keeps the rest', async () => {
    const paused = await mixed();
    const res = await h.gql<{ cancelTurn: { status: string } }>(h.tokenOf(alice), CANCEL, { sessionId: paused.sessionId, turnId: paused.turnId });
    expect(res.body.data?.cancelTurn.status).toBe('CANCELLED');
    const after = await recordsOf(paused);
    expect(after.toolCalls.map((r) => [r.name, r.status])).toEqual([
      ['write_file', 'COMPLETED'],
      ['read_file', 'ABANDONED'],
    ]);
  });
}

describeWithMysql('tool call audit trail on MariaDB', () => auditSuite(true));
describe('tool call audit trail on embedded SQLite', () => auditSuite(false));

/** The live side through a real turnOutput subscription: same authorisation as every other event. */
describe('tool calls in the turnOutput subscription', () => {
  let h: TestGateway;
  const clients: Client[] = [];
  const connect = (c: Caller) => {
    const client = wsClient(h.url, h.tokenOf(c));
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, output: 'bus' });
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await h.close();
  });

  it('delivers tool call items between the text to readers of the session, and to nobody else', async () => {
    h.fake.enqueue(
      { kind: 'tool_calls', text: 'Let me write it. ', calls: [{ name: 'write_file', arguments: '{"path":"a.md","content":"A"}' }] },
      { kind: 'text', chunks: ['Written.'] },
    );
    const started = await h.executeAsync(alice, { conversationContextId: h.conversationContextId, instruction: 'Write a.md' });
    const { sessionId, turnId } = started.body.data!.executeAsync;
    await h.waitForTurn(alice, sessionId, turnId);
    const sub = subscribe<{ turnOutput: OutputItem }>(connect(alice), OUTPUT, { sessionId, turnId });
    await sub.done;
    const items = sub.data.map((d) => d.turnOutput);
    expect(items.map((i) => i.index)).toEqual([0, 1, 2, 3]);
    expect(items.map((i) => i.textDelta).join('')).toBe('Let me write it. Written.');
    expect(items.filter((i) => i.toolCall).map((i) => i.toolCall)).toEqual([
      { id: expect.any(String), name: 'write_file', origin: 'SERVER', status: 'RUNNING', resultSummary: null, executionMs: null },
      { id: expect.any(String), name: 'write_file', origin: 'SERVER', status: 'COMPLETED', resultSummary: expect.stringContaining('a.md'), executionMs: expect.any(Number) },
    ]);
    expect(items.filter((i) => i.toolCall).every((i) => i.textDelta === '')).toBe(true);
    const stranger = subscribe<{ turnOutput: OutputItem }>(connect(bob), OUTPUT, { sessionId, turnId });
    await stranger.done;
    expect(stranger.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'NOT_FOUND' } })] }]);
  });
});

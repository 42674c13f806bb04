import type { Caller } from '../../src/domain/caller';
import type { ChunkRef } from '../../src/domain/turn';
import type { RetrievalRequest, RetrievedChunk, Retriever } from '../../src/retrieval/retrieval.port';
import { admin, user } from './callers';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai';
import { RecordingOutput } from './in-memory-ports';
import { startTestGateway, type GraphQLResponse, type TestGateway } from './gateway';

/** A clock the test moves forward (chain expiry, leases); real time keeps running underneath. */
export class TestClock {
  private offsetMs = 0;
  readonly now = (): Date => new Date(Date.now() + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** Retrieval as the test scripts it, remembering every request. */
export class ScriptedRetriever implements Retriever {
  chunks: RetrievedChunk[] = [];
  failWith: Error | null = null;
  readonly requests: RetrievalRequest[] = [];
  async retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]> {
    this.requests.push(request);
    if (this.failWith) throw this.failWith;
    return this.chunks;
  }
}

export const chunk = (id: string, text = `text of ${id}`, hash = `hash-${id}`): RetrievedChunk => ({
  ref: { chunkId: id, path: `src/${id}.ts`, startLine: 1, endLine: 20, contentHash: hash, score: 0.8 } satisfies ChunkRef,
  text,
  language: 'typescript',
});

export const alice = user('alice');
export const bob = user('bob');
export const boss = admin('boss');
export const mallory = user('alice', 'globex');

export const READ_FILE_TOOL = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  parametersJson: '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
};

export const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    __typename
    ... on AgentFinalResponse {
      kind sessionId turnId modeDisplayName primaryOutputText userWarnings
      files { url } toolResults { toolCallId }
      usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
    }
    ... on AgentToolContinuation { kind sessionId turnId modeDisplayName toolCalls { toolCallId name argumentsJson arguments } toolContinuationMessage }
  }
}`;

export const EXECUTE_ASYNC = `mutation ExecuteAsync($input: AgentExecuteInput!) { executeAsync(input: $input) { sessionId turnId sequenceNumber } }`;

export const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    id sessionId sequenceNumber status mode conversationId openAIModel openAIResponseId previousOpenAIResponseId
    openAIResponseReceivedDate openAIChainExpiresDate instructionSummary fullInstructionUrl agentAnswerSummary
    fullAgentAnswerUrl openAIRequestPayloadUrl openAIResponsePayloadUrl warnings errors creationDate statusTimeStamp
    chunkRefs { chunkId path startLine endLine contentHash score }
    activeFileRefs { path contentHash sizeBytes isTouched wasSentToLLM wasTooLargeToSend }
    pendingToolCalls { toolCallId name argumentsJson }
    usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
    createdByUser { id }
  }
}`;

export interface TurnView {
  id: string;
  sessionId: string;
  sequenceNumber: number;
  status: string;
  mode: string;
  conversationId: string | null;
  openAIModel: string | null;
  openAIResponseId: string | null;
  previousOpenAIResponseId: string | null;
  openAIResponseReceivedDate: string | null;
  openAIChainExpiresDate: string | null;
  instructionSummary: string;
  fullInstructionUrl: string | null;
  agentAnswerSummary: string | null;
  fullAgentAnswerUrl: string | null;
  openAIRequestPayloadUrl: string | null;
  openAIResponsePayloadUrl: string | null;
  warnings: string[];
  errors: string[];
  creationDate: string;
  statusTimeStamp: string;
  chunkRefs: ChunkRef[];
  activeFileRefs: { path: string; contentHash: string; sizeBytes: number; isTouched: boolean; wasSentToLLM: boolean; wasTooLargeToSend: boolean }[];
  pendingToolCalls: { toolCallId: string; name: string; argumentsJson: string }[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; estimatedCostUsd: number | null; isEstimated: boolean } | null;
  createdByUser: { id: string };
}

export interface ExecuteAnswer {
  __typename: 'AgentFinalResponse' | 'AgentToolContinuation';
  kind: 'FINAL' | 'CLIENT_TOOL_CONTINUATION';
  sessionId: string;
  turnId: string;
  modeDisplayName: string;
  primaryOutputText?: string;
  userWarnings?: string[] | null;
  files?: unknown;
  toolResults?: unknown;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number; estimatedCostUsd: number | null; isEstimated: boolean } | null;
  toolCalls?: { toolCallId: string; name: string; argumentsJson: string; arguments: unknown }[];
  toolContinuationMessage?: string | null;
}

export interface ExecuteHarness {
  readonly t: TestGateway;
  readonly fake: FakeOpenAI;
  readonly clock: TestClock;
  readonly output: RecordingOutput;
  readonly retriever: ScriptedRetriever;
  readonly agentContextId: string;
  /** A conversation with a system prompt and the read_file client tool. */
  readonly conversationContextId: string;
  tokenOf(caller: Caller): string;
  execute(caller: Caller, input: Record<string, unknown>): Promise<GraphQLResponse<{ execute: ExecuteAnswer }>>;
  executeAsync(caller: Caller, input: Record<string, unknown>): Promise<GraphQLResponse<{ executeAsync: { sessionId: string; turnId: string; sequenceNumber: number } }>>;
  turn(caller: Caller, sessionId: string, turnId: string): Promise<TurnView>;
  /** Polls until the turn has left PENDING (or `status` is reached). */
  waitForTurn(caller: Caller, sessionId: string, turnId: string, until?: (t: TurnView) => boolean): Promise<TurnView>;
  /** GET a gateway blob URL as `caller`. */
  blob(caller: Caller | null, url: string): Promise<{ status: number; text: string; contentType: string | null }>;
  rest(caller: Caller | null, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface ExecuteHarnessOptions {
  readonly mysql?: boolean;
  readonly databaseUrl?: string;
  readonly dataDir?: string;
  readonly env?: Record<string, string>;
  /** Reuse a running stand-in (several gateways, one provider). */
  readonly fake?: FakeOpenAI;
  /** Reuse contexts created by another harness on the same database. */
  readonly contexts?: { agentContextId: string; conversationContextId: string };
  /** No OPENAI_API_KEY: the offline adapter answers. */
  readonly offline?: boolean;
  /** Streamed output goes to the gateway's event bus (turnOutput subscriptions) instead of `output`. */
  readonly liveOutput?: boolean;
}

/** A gateway wired to the local Responses API stand-in, with scripted retrieval, a movable clock and recorded output. */
export async function startExecuteHarness(options: ExecuteHarnessOptions = {}): Promise<ExecuteHarness> {
  const fake = options.fake ?? (await startFakeOpenAI());
  const clock = new TestClock();
  const output = new RecordingOutput();
  const retriever = new ScriptedRetriever();
  const t = await startTestGateway({
    ...(options.mysql ? { mysql: true } : {}),
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    env: {
      ...(options.offline ? {} : { OPENAI_API_KEY: 'sk-test-key', OPENAI_BASE_URL: fake.url }),
      OPENAI_MODEL: 'gpt-4.1-mini',
      LLM_RETRY_MAX_DELAY_MS: '2000',
      ...options.env,
    },
    hooks: { now: clock.now, retriever, ...(options.liveOutput ? {} : { output }) },
  });
  const tokenOf = (c: Caller) => t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });
  let ids = options.contexts;
  if (!ids) {
    const { contexts } = t.gateway.services;
    const agent = await contexts.upsertAgentContext(boss, { name: 'Backend', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' });
    const conversation = await contexts.upsertConversationContext(boss, {
      name: 'Refactor',
      systemPrompt: 'You are a careful refactoring assistant.',
      temperature: 0.3,
      tools: [READ_FILE_TOOL],
    });
    ids = { agentContextId: agent.id, conversationContextId: conversation.id };
  }
  const harness: ExecuteHarness = {
    t,
    fake,
    clock,
    output,
    retriever,
    ...ids,
    tokenOf,
    execute: (caller, input) => t.gql(tokenOf(caller), EXECUTE, { input: { agentContextId: ids.agentContextId, ...input } }),
    executeAsync: (caller, input) => t.gql(tokenOf(caller), EXECUTE_ASYNC, { input: { agentContextId: ids.agentContextId, ...input } }),
    async turn(caller, sessionId, turnId) {
      const res = await t.gql<{ agentSessionTurn: TurnView | null }>(tokenOf(caller), TURN, { sessionId, turnId });
      const turn = res.body.data?.agentSessionTurn;
      if (!turn) throw new Error(`turn ${turnId} not readable: ${JSON.stringify(res.body.errors)}`);
      return turn;
    },
    async waitForTurn(caller, sessionId, turnId, until = (x) => x.status !== 'PENDING') {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const turn = await harness.turn(caller, sessionId, turnId);
        if (until(turn)) return turn;
        if (Date.now() > deadline) throw new Error(`turn ${turnId} stayed ${turn.status}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async blob(caller, url) {
      const res = await fetch(`${t.url}${url}`, { headers: caller ? { authorization: `Bearer ${tokenOf(caller)}` } : {} });
      return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
    },
    async rest(caller, body, headers = {}) {
      const res = await fetch(`${t.url}/api/ai/agent/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(caller ? { authorization: `Bearer ${tokenOf(caller)}` } : {}), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async close() {
      await t.close();
      if (!options.fake) await fake.close();
    },
  };
  return harness;
}

/** The user message text of a recorded provider request (the last input message of role user). */
export function userTextOf(body: Record<string, unknown>): string {
  const input = (body.input ?? []) as { type?: string; role?: string; content?: unknown }[];
  const users = input.filter((i) => i.type === 'message' && i.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : '';
}

export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

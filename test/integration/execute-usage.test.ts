import { describeWithMysql } from '../support/services';
import { alice, eventually, EXECUTE_SETUP, startGateway, userTextOf, type TestGateway } from '../support/testkit';

const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    status openAIModel answeredByModel
    usage { inputTokens outputTokens totalTokens cachedInputTokens estimatedCostUsd isEstimated }
  }
  agentSession(id: $sessionId) { usage { inputTokens outputTokens cachedInputTokens estimatedCostUsd isEstimated } }
}`;
const CANCEL = `mutation Cancel($sessionId: ID!, $turnId: ID!) { cancelTurn(sessionId: $sessionId, turnId: $turnId) { status } }`;

interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens?: number;
  cachedInputTokens: number;
  estimatedCostUsd: number | null;
  isEstimated: boolean;
}
interface TurnUsageView {
  agentSessionTurn: { status: string; openAIModel: string | null; answeredByModel: string | null; usage: Usage | null };
  agentSession: { usage: Usage };
}

/** ceil(chars / 4) of what a recorded provider request sent: the system prompt and the user message. */
const sentEstimate = (body: Record<string, unknown>) => Math.ceil([(typeof body.instructions === 'string' ? body.instructions : ''), userTextOf(body)].filter((t) => t).join('\n').length / 4);

/**
 * Issue 10 item 6 (spec 003): failed and cancelled turns count the tokens spent, cached input
 * is priced at its own rate, and the turn names the model that answered.
 */
function usageSuite(mysql: boolean): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({
      ...EXECUTE_SETUP,
      database: mysql ? 'mysql' : 'sqlite',
      env: { MODEL_PRICING: '{"gpt-4.1-mini": {"inputPer1K": 1, "cachedInputPer1K": 0.1, "outputPer1K": 2}}' },
    });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    h.fake.requests.length = 0;
    h.fake.setDatedModels(false);
  });

  const view = async (ids: { sessionId: string; turnId: string }) => (await h.gql<TurnUsageView>(h.tokenOf(alice), TURN, ids)).body.data!;
  const start = async (instruction: string) => {
    const res = await h.executeAsync(alice, { conversationContextId: h.conversationContextId, instruction });
    return res.body.data!.executeAsync;
  };

  it('prices cached input tokens at the cached rate and names the dated model that answered', async () => {
    h.fake.setDatedModels(true);
    h.fake.enqueue({ kind: 'text', chunks: ['Cached.'], usage: { input: 2000, cached: 1500, output: 100 } });
    const res = await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'Use the cache' });
    const answer = res.body.data!.execute;
    const { agentSessionTurn: turn, agentSession: session } = await view(answer);
    expect(turn.openAIModel).toBe('gpt-4.1-mini');
    expect(turn.answeredByModel).toBe('gpt-4.1-mini-2025-04-14');
    // 500 uncached at 1, 1,500 cached at 0.1, 100 output at 2 (per 1K): the dated name is priced by its prefix.
    expect(turn.usage).toEqual({ inputTokens: 2000, outputTokens: 100, totalTokens: 2100, cachedInputTokens: 1500, estimatedCostUsd: 0.85, isEstimated: false });
    expect(answer.usage).toMatchObject({ inputTokens: 2000, estimatedCostUsd: 0.85 });
    expect(session.usage).toMatchObject({ cachedInputTokens: 1500, estimatedCostUsd: 0.85 });
  });

  it('records the usage the provider reported for a response it failed, and the model it named', async () => {
    h.fake.enqueue({ kind: 'failed', message: 'overloaded', usage: { input: 900, output: 30 }, model: 'gpt-4.1-mini-2025-04-14' });
    const ids = await start('Fail after spending');
    const { agentSessionTurn: turn, agentSession: session } = await view(await waitSettled(ids));
    expect(turn.status).toBe('FAILED');
    expect(turn.usage).toEqual({ inputTokens: 900, outputTokens: 30, totalTokens: 930, cachedInputTokens: 0, estimatedCostUsd: 0.96, isEstimated: false });
    expect(turn.answeredByModel).toBe('gpt-4.1-mini-2025-04-14');
    expect(session.usage).toMatchObject({ inputTokens: 900, outputTokens: 30, estimatedCostUsd: 0.96 });
  });

  it('estimates ceil(chars/4) of what was sent and streamed back when a failed call reports nothing, and marks it', async () => {
    h.fake.enqueue({ kind: 'stream_error', chunks: ['partial ', 'text!'], message: 'connection reset' });
    const ids = await start('Fail mid-stream');
    const { agentSessionTurn: turn } = await view(await waitSettled(ids));
    expect(turn.status).toBe('FAILED');
    const input = sentEstimate(h.fake.requests[0]!.body);
    expect(turn.usage).toEqual({
      inputTokens: input,
      outputTokens: Math.ceil('partial text!'.length / 4),
      totalTokens: input + 4,
      cachedInputTokens: 0,
      estimatedCostUsd: (input * 1 + 4 * 2) / 1000,
      isEstimated: true,
    });
  });

  it('estimates the tokens of a refused call (HTTP 400): what was sent, nothing received', async () => {
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'bad request' });
    const ids = await start('Refused');
    const { agentSessionTurn: turn } = await view(await waitSettled(ids));
    expect(turn.status).toBe('FAILED');
    expect(turn.usage).toMatchObject({ inputTokens: sentEstimate(h.fake.requests[0]!.body), outputTokens: 0, isEstimated: true });
  });

  it('records the estimated tokens of a cancelled turn: what was sent and the partial answer', async () => {
    h.fake.enqueue({ kind: 'stall', chunks: ['half an ', 'answer'] });
    const ids = await start('Cancel me');
    await eventually(() => h.output.of(ids.turnId).text === 'half an answer');
    const res = await h.gql<{ cancelTurn: { status: string } }>(h.tokenOf(alice), CANCEL, ids);
    expect(res.body.data?.cancelTurn.status).toBe('CANCELLED');
    const { agentSessionTurn: turn, agentSession: session } = await view(ids);
    const input = sentEstimate(h.fake.requests[0]!.body);
    expect(turn.usage).toMatchObject({ inputTokens: input, outputTokens: Math.ceil('half an answer'.length / 4), isEstimated: true });
    expect(session.usage.isEstimated).toBe(true);
  });

  async function waitSettled(ids: { sessionId: string; turnId: string }) {
    await h.waitForTurn(alice, ids.sessionId, ids.turnId);
    return ids;
  }
}

describeWithMysql('honest usage on MariaDB', () => usageSuite(true));
describe('honest usage on embedded SQLite', () => usageSuite(false));

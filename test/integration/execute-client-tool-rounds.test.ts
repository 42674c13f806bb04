import type { Caller } from '../../src/domain/caller';
import { describeWithMysql } from '../support/services';
import { alice, EXECUTE, EXECUTE_SETUP, startGateway, type ExecuteAnswer, type TestGateway } from '../support/testkit';

/**
 * Issue 36: MAX_CLIENT_TOOL_ROUNDS caps how often one turn pauses for client tools. The
 * continuation whose answer asks once more gets a clear error; the turn FAILS with an error
 * naming the cap, and the tokens and cost of every round it ran stay recorded.
 */
const CAP = 2;
const ROUND_USAGE = { input: 1000, output: 100 };

function clientToolRoundsSuite(database: 'sqlite' | 'mysql'): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database, env: { MAX_CLIENT_TOOL_ROUNDS: String(CAP) } });
  });
  afterAll(() => h.close());

  const asksForAFile = (n: number) => h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'read_file', arguments: `{"path":"${n}.ts"}` }], usage: ROUND_USAGE });
  const resultsFor = (calls: readonly { toolCallId: string }[]) => calls.map((c) => ({ toolCallId: c.toolCallId, executionMs: 2, resultJson: '{"text":"…"}' }));
  const TOOL_CALLS = 'query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { status errors toolCalls { id status origin } } }';
  const turnTools = async (caller: Caller, s: string, t: string) =>
    (await h.gql<{ agentSessionTurn: { status: string; errors: string[]; toolCalls: { id: string; status: string; origin: string }[] } }>(h.tokenOf(caller), TOOL_CALLS, { s, t })).body.data!
      .agentSessionTurn;

  it('lets a turn pause up to the cap and fails the continuation that would pause once more (GraphQL execute)', async () => {
    for (let n = 1; n <= CAP + 1; n++) asksForAFile(n);
    let answer = (await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'Read every file you need' })).body.data!.execute;
    const { sessionId, turnId } = answer;
    for (let round = 2; round <= CAP; round++) {
      const next = await h.gql<{ execute: ExecuteAnswer }>(h.tokenOf(alice), EXECUTE, {
        input: { agentContextId: h.agentContextId, sessionId, turnId, toolResults: resultsFor(answer.toolCalls!) },
      });
      answer = next.body.data!.execute;
      expect(answer).toMatchObject({ kind: 'CLIENT_TOOL_CONTINUATION', turnId });
    }
    const refused = await h.gql(h.tokenOf(alice), EXECUTE, { input: { agentContextId: h.agentContextId, sessionId, turnId, toolResults: resultsFor(answer.toolCalls!) } });
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'TOO_MANY_TOOL_ROUNDS', limit: CAP, sessionId, turnId });
    expect(refused.body.errors?.[0]?.message).toContain(`MAX_CLIENT_TOOL_ROUNDS (${CAP})`);

    const failed = await h.turn(alice, sessionId, turnId);
    expect(failed).toMatchObject({ status: 'FAILED', pendingToolCalls: [] });
    expect(failed.errors).toEqual([expect.stringContaining(`MAX_CLIENT_TOOL_ROUNDS (${CAP})`)]);
    // Every round the provider ran is counted and priced (gpt-4.1-mini: $0.0004 / $0.0016 per 1K).
    const rounds = CAP + 1;
    expect(failed.usage).toMatchObject({ inputTokens: rounds * ROUND_USAGE.input, outputTokens: rounds * ROUND_USAGE.output, isEstimated: false });
    expect(failed.usage?.estimatedCostUsd).toBeCloseTo(rounds * (0.0004 + 0.1 * 0.0016), 8);
    const audit = await turnTools(alice, sessionId, turnId);
    expect(audit.toolCalls.map((c) => [c.origin, c.status])).toEqual([
      ...Array.from({ length: CAP }, () => ['CLIENT', 'COMPLETED']),
      ['CLIENT', 'ABANDONED'],
    ]);
    // The turn is over: more results are refused, and nothing more is sent to the provider.
    const sent = h.fake.requests.length;
    const late = await h.gql(h.tokenOf(alice), EXECUTE, { input: { agentContextId: h.agentContextId, sessionId, turnId, toolResults: resultsFor(answer.toolCalls!) } });
    expect(late.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(h.fake.requests.length).toBe(sent);
    // The session goes on with a new instruction.
    h.fake.enqueue({ kind: 'text', chunks: ['Done without tools.'] });
    const again = await h.execute(alice, { sessionId, conversationContextId: h.conversationContextId, instruction: 'Answer without tools' });
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data?.execute).toMatchObject({ kind: 'FINAL', primaryOutputText: 'Done without tools.' });
  });

  it('answers the refused continuation over REST with 422 TOO_MANY_TOOL_ROUNDS and records the turn the same way', async () => {
    for (let n = 1; n <= CAP + 1; n++) asksForAFile(n);
    const body = (extra: Record<string, unknown>) => ({ agentContextId: h.agentContextId, ...extra });
    let answer = await h.rest(alice, body({ conversationContextId: h.conversationContextId, instruction: 'Read them all', clientKind: 'CLI' }));
    const { sessionId, turnId } = answer.body as { sessionId: string; turnId: string };
    for (let round = 1; round <= CAP; round++) {
      expect(answer).toMatchObject({ status: 200, body: { kind: 'client_tool_continuation' } });
      answer = await h.rest(alice, body({ sessionId, turnId, toolResults: resultsFor(answer.body.toolCalls as { toolCallId: string }[]) }));
    }
    expect(answer).toEqual({ status: 422, body: { errorCode: 'TOO_MANY_TOOL_ROUNDS', errorMessage: expect.stringContaining(`MAX_CLIENT_TOOL_ROUNDS (${CAP})`), sessionId, turnId } });
    const failed = await h.turn(alice, sessionId, turnId);
    expect(failed.status).toBe('FAILED');
    expect(failed.usage).toMatchObject({ inputTokens: (CAP + 1) * ROUND_USAGE.input, outputTokens: (CAP + 1) * ROUND_USAGE.output });
  });
}

describe('client-tool rounds per turn on embedded SQLite', () => clientToolRoundsSuite('sqlite'));
describeWithMysql('client-tool rounds per turn on MariaDB', () => clientToolRoundsSuite('mysql'));

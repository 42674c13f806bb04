import { subscribe, wsClient } from '../support/ws';
import { alice, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

/**
 * Issue 36, through GraphQL: a client that answers tool calls with executeAsync sees the turn
 * fail live once its model asks for client tools more than MAX_CLIENT_TOOL_ROUNDS times, with
 * the error naming the cap, and reads the rounds' usage on the turn.
 */
describe('MAX_CLIENT_TOOL_ROUNDS over GraphQL', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, env: { MAX_CLIENT_TOOL_ROUNDS: '1' } });
  });
  afterAll(() => h.close());

  const PENDING_CALLS = 'query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { status pendingToolCalls { toolCallId } } }';
  type Pending = { agentSessionTurn: { status: string; pendingToolCalls: { toolCallId: string }[] } };

  it('accepts the continuation, then publishes the turn FAILED with an error naming the cap and its usage counted', async () => {
    h.fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'read_file', arguments: '{"path":"a.ts"}' }], usage: { input: 200, output: 20 } },
      { kind: 'tool_calls', calls: [{ name: 'read_file', arguments: '{"path":"b.ts"}' }], usage: { input: 300, output: 30 } },
    );
    const started = (await h.executeAsync(alice, { conversationContextId: h.conversationContextId, instruction: 'Read what you need' })).body.data!.executeAsync;
    const { sessionId, turnId } = started;
    const paused = await h.waitForTurn(alice, sessionId, turnId, (t) => t.pendingToolCalls.length > 0);
    expect(paused.status).toBe('PENDING');

    const client = wsClient(h.url, h.tokenOf(alice));
    try {
      // From the latest event on, so the change cannot slip past a subscription still starting.
      const latest = (await h.gql<{ latestEventId: string }>(h.tokenOf(alice), '{ latestEventId }')).body.data!.latestEventId;
      const feed = subscribe<{ turnStatusChanged: { status: string; turn: { errors: string[] } } }>(
        client,
        'subscription($s: ID!, $after: ID) { turnStatusChanged(sessionId: $s, afterEventId: $after) { status turn { errors } } }',
        { s: sessionId, after: latest },
      );
      const pending = (await h.gql<Pending>(h.tokenOf(alice), PENDING_CALLS, { s: sessionId, t: turnId })).body.data!.agentSessionTurn.pendingToolCalls;
      const accepted = await h.executeAsync(alice, {
        sessionId,
        turnId,
        toolResults: pending.map((c) => ({ toolCallId: c.toolCallId, executionMs: 3, errorMessage: 'no such file' })),
      });
      expect(accepted.body.data?.executeAsync).toMatchObject({ sessionId, turnId });
      const [event] = await feed.waitFor(1, 20_000);
      expect(event?.data?.turnStatusChanged).toEqual({ status: 'FAILED', turn: { errors: [expect.stringContaining('MAX_CLIENT_TOOL_ROUNDS (1)')] } });
    } finally {
      await client.dispose();
    }
    const failed = await h.turn(alice, sessionId, turnId);
    expect(failed).toMatchObject({ status: 'FAILED', pendingToolCalls: [] });
    expect(failed.usage).toMatchObject({ inputTokens: 500, outputTokens: 50, totalTokens: 550, isEstimated: false });
    expect(failed.usage?.estimatedCostUsd).toBeGreaterThan(0);
  });
});

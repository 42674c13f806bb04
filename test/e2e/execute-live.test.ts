import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { subscribe, wsClient } from '../support/ws';
import { alice, boss, EXECUTE, EXECUTE_ASYNC, startGateway, type TestGateway } from '../support/testkit';

const OUTPUT = `subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { turnId index textDelta } }`;
const STATUS = `subscription S($sessionId: ID!) { turnStatusChanged(sessionId: $sessionId) { turnId previousStatus status } }`;

/** Execute through the real event bus: what subscribers of the live issue receive from the orchestrator. */
describe('execute seen over subscriptions', () => {
  let fake: FakeOpenAI;
  let t: TestGateway;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startGateway({ provider: fake });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('streams the answer to turnOutput (from index 0, gap-free, completing with the turn) and the status changes to turnStatusChanged', async () => {
    const token = t.token({ userId: alice.userId });
    const agent = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Live', vectorCollection: 'live', defaultModel: 'gpt-4.1-mini' });
    const first = await t.gql<{ execute: { sessionId: string } }>(token, EXECUTE, { input: { agentContextId: agent.id, instruction: 'Open the session' } });
    const sessionId = first.body.data!.execute.sessionId;
    const client = wsClient(t.url, token);
    try {
      const statuses = subscribe<{ turnStatusChanged: { turnId: string; previousStatus: string | null; status: string } }>(client, STATUS, { sessionId });
      await new Promise((r) => setTimeout(r, 200));
      const pieces = ['Streaming ', 'through ', 'the ', 'event ', 'bus.'];
      fake.enqueue({ kind: 'text', chunks: pieces, delayMs: 80 });
      const started = await t.gql<{ executeAsync: { turnId: string } }>(token, EXECUTE_ASYNC, { input: { agentContextId: agent.id, sessionId, instruction: 'Stream it' } });
      const turnId = started.body.data!.executeAsync.turnId;
      const output = subscribe<{ turnOutput: { turnId: string; index: number; textDelta: string } }>(client, OUTPUT, { sessionId, turnId });
      await output.done;
      expect(output.data.map((d) => d.turnOutput.textDelta).join('')).toBe(pieces.join(''));
      expect(output.data.map((d) => d.turnOutput.index)).toEqual(output.data.map((_, i) => i));
      await statuses.waitFor(2);
      expect(statuses.data.map((d) => d.turnStatusChanged).filter((e) => e.turnId === turnId)).toEqual([
        { turnId, previousStatus: null, status: 'PENDING' },
        { turnId, previousStatus: 'PENDING', status: 'COMPLETED' },
      ]);
      statuses.unsubscribe();
    } finally {
      await client.dispose();
    }
  });
});

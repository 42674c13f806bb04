import type { Caller } from '../../src/domain/caller';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { describeWithMysql } from '../support/services';
import { eventually, startGateway, user, type TestGateway } from '../support/testkit';

const EXECUTE = `mutation($input: AgentExecuteInput!) { execute(input: $input) { ... on AgentFinalResponse { sessionId turnId } } }`;
const CANCEL = `mutation($sessionId: ID!, $turnId: ID!) { cancelTurn(sessionId: $sessionId, turnId: $turnId) { status } }`;
/** More executes than the database pool has connections (2) and the libuv threadpool has threads (4). */
const AT_ONCE = 24;

/**
 * Issue 9 item 4: executes of different sessions do not queue inside the gateway; all of them
 * are at the provider at the same time (the stand-in counts its open requests). The real
 * retrieval path runs (OpenAI embeddings from the stand-in, the embedded index), budgets at
 * their defaults (each execute is another user's), and the database pool is smaller than the burst.
 */
function concurrencySuite(mysql: boolean): void {
  let fake: FakeOpenAI;
  let t: TestGateway;
  let agentContextId: string;
  const users: Caller[] = Array.from({ length: AT_ONCE }, (_, i) => user(`burst-${i}`));

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startGateway({ database: mysql ? 'mysql' : 'sqlite', provider: fake, retrieval: 'configured', env: { DB_POOL_SIZE: '2' } });
    const agent = await t.gql<{ upsertAgentContext: { id: string } }>(
      t.token({ userId: 'boss', roles: ['admin'] }),
      'mutation { upsertAgentContext(input: { name: "Burst", vectorCollection: "burst", defaultModel: "gpt-4.1-mini" }) { id } }',
    );
    agentContextId = agent.body.data!.upsertAgentContext.id;
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('has every execute of a burst at the provider at once, each in its own new session, and each can still be cancelled', async () => {
    fake.enqueue(...users.map(() => ({ kind: 'hang' as const })));
    const answers = users.map((u, i) => t.gql(t.tokenOf(u), EXECUTE, { input: { agentContextId, instruction: `Burst question ${i}` } }));
    await eventually(() => fake.open === AT_ONCE, 20_000);
    expect(fake.open).toBe(AT_ONCE);
    expect(t.gateway.orchestrator.inFlightCount).toBe(AT_ONCE);

    const pending = await t.gateway.db.dataSource.query<{ sessionId: string; turnId: string; userId: string }[]>(
      "SELECT session_id AS sessionId, id AS turnId, created_by_user_id AS userId FROM agent_session_turns WHERE status = 'PENDING'",
    );
    expect(new Set(pending.map((p) => p.sessionId)).size).toBe(AT_ONCE);
    for (const p of pending) {
      const owner = users.find((u) => u.userId === p.userId)!;
      const cancelled = await t.gql<{ cancelTurn: { status: string } }>(t.tokenOf(owner), CANCEL, { sessionId: p.sessionId, turnId: p.turnId });
      expect(cancelled.body.data?.cancelTurn.status).toBe('CANCELLED');
    }
    const codes = (await Promise.all(answers)).map((r) => r.body.errors?.[0]?.extensions?.code);
    expect(codes).toEqual(users.map(() => 'CANCELLED'));
    await eventually(() => fake.open === 0);
  }, 60_000);
}

describe('execute, a burst on embedded SQLite', () => concurrencySuite(false));
describeWithMysql('execute, a burst on MySQL', () => concurrencySuite(true));

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Caller } from '../../src/domain/caller';
import { redisBudgetStores } from '../../src/budgets/redis-budget.adapter';
import { createLogger } from '../../src/logger';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { alice, bob, carol, eventually, EXECUTE_SETUP, globexAdmin, mallory, startGateway, type TestGateway } from '../support/testkit';

/** Issue 8 point 4: per-user and per-org budgets for executes. */

type Errors = { message: string; extensions?: Record<string, unknown> }[] | undefined;
const codeOf = (errors: Errors) => errors?.[0]?.extensions?.code;

async function sessionCount(h: TestGateway, caller: Caller): Promise<number> {
  const res = await h.gql<{ agentSessions: { totalCount: number } }>(h.tokenOf(caller), '{ agentSessions { totalCount } }');
  return res.body.data!.agentSessions.totalCount;
}

describe('executes per minute', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({
      ...EXECUTE_SETUP,
      env: { RATE_LIMIT_EXECUTES_PER_MINUTE: '3', RATE_LIMIT_ORG_EXECUTES_PER_MINUTE: '6', MAX_TURNS_IN_FLIGHT_PER_USER: '0' },
    });
  });
  afterAll(() => h.close());

  it("refuses a user's execute over the budget on every path, records nothing, and leaves other users alone", async () => {
    const first = (await h.execute(alice, { instruction: 'one' })).body.data!.execute;
    expect((await h.executeAsync(alice, { instruction: 'two' })).body.errors).toBeUndefined();
    expect((await h.rest(alice, { agentContextId: h.agentContextId, instruction: 'three' })).status).toBe(200);
    const sessions = await sessionCount(h, alice);
    const requests = h.fake.requests.length;

    const sync = await h.execute(alice, { instruction: 'four' });
    expect(sync.body.errors?.[0]).toMatchObject({
      message: expect.stringContaining('at most 3 executes per minute per user'),
      extensions: { code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number), budget: 'executesPerMinute' },
    });
    const retryAfter = sync.body.errors![0]!.extensions!.retryAfterSeconds as number;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(codeOf((await h.executeAsync(alice, { sessionId: first.sessionId, instruction: 'five' })).body.errors)).toBe('RATE_LIMITED');
    const rerun = await h.gql(h.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { rerunTurn(sessionId: $s, turnId: $t) { __typename } }', {
      s: first.sessionId,
      t: first.turnId,
    });
    expect(codeOf(rerun.body.errors)).toBe('RATE_LIMITED');

    const res = await fetch(`${h.url}/api/ai/agent/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.tokenOf(alice)}` },
      body: JSON.stringify({ agentContextId: h.agentContextId, instruction: 'six' }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ errorCode: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });

    expect(await sessionCount(h, alice)).toBe(sessions);
    expect((await h.turn(alice, first.sessionId, first.turnId)).sequenceNumber).toBe(1);
    expect((await h.gateway.services.sessions.getSession(alice, first.sessionId))?.turnCount).toBe(1);
    expect(h.fake.requests.length).toBe(requests);

    const other = await h.execute(bob, { instruction: 'bob is not alice' });
    expect(other.body.data?.execute.kind).toBe('FINAL');
  });

  it("stops at the org's budget, which one user's refused flood does not spend", async () => {
    // alice spent 3 (refused ones cost nothing), bob 1: the org (6) has 2 left.
    expect((await h.execute(carol, { instruction: 'carol 1' })).body.data?.execute.kind).toBe('FINAL');
    for (let i = 0; i < 3; i++) expect(codeOf((await h.execute(alice, { instruction: 'still alice' })).body.errors)).toBe('RATE_LIMITED');
    expect((await h.execute(bob, { instruction: 'bob 2' })).body.data?.execute.kind).toBe('FINAL');
    const refused = await h.execute(carol, { instruction: 'carol 2' });
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', budget: 'orgExecutesPerMinute' });
    // Another org has its own budget, even for a user id that is spent in acme.
    const { contexts } = h.gateway.services;
    const agent = await contexts.upsertAgentContext(globexAdmin, { name: 'G', vectorCollection: 'g', defaultModel: 'gpt-4.1-mini' });
    expect((await h.execute(mallory, { agentContextId: agent.id, instruction: 'globex' })).body.data?.execute.kind).toBe('FINAL');
  });
});

describe('turns in flight per user', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, env: { MAX_TURNS_IN_FLIGHT_PER_USER: '2', RATE_LIMIT_EXECUTES_PER_MINUTE: '0', TOOL_RESULT_TIMEOUT_SECONDS: '60' } });
  });
  afterAll(() => h.close());

  const startSlow = async (caller: Caller, instruction: string) => {
    h.fake.enqueue({ kind: 'hang' });
    const res = await h.executeAsync(caller, { instruction });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.executeAsync;
  };

  it('counts a turn while its provider call runs and gives the slot back however the round ends', async () => {
    const a = await startSlow(alice, 'slow one');
    const b = await startSlow(alice, 'slow two');
    const over = await h.executeAsync(alice, { instruction: 'third at once' });
    expect(over.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', budget: 'turnsInFlight', retryAfterSeconds: 1 });
    expect(await sessionCount(h, alice)).toBe(2);
    // bob has slots of his own.
    expect((await h.execute(bob, { instruction: 'bob' })).body.data?.execute.kind).toBe('FINAL');

    // Cancelled: the slot is free again.
    await h.gql(h.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }', { s: a.sessionId, t: a.turnId });
    await h.waitForTurn(alice, a.sessionId, a.turnId);
    // Failed (the provider errs): free again.
    h.fake.enqueue({ kind: 'http_error', status: 400, message: 'bad request' });
    const failed = (await h.execute(alice, { instruction: 'fails' })).body;
    expect(codeOf(failed.errors)).toBe('LLM_FAILED');
    // Paused for client tools: no provider call runs while the client works.
    h.fake.enqueue({ kind: 'tool_calls', calls: [{ name: 'read_file', arguments: '{"path":"a.ts"}' }] });
    const paused = (await h.execute(alice, { conversationContextId: h.conversationContextId, instruction: 'needs a tool' })).body.data!.execute;
    expect(paused.kind).toBe('CLIENT_TOOL_CONTINUATION');
    // Completed: free again; one slot (b) is still taken, so exactly one more fits.
    expect((await h.execute(alice, { instruction: 'completes' })).body.data?.execute.kind).toBe('FINAL');
    const c = await startSlow(alice, 'slow three');
    expect(codeOf((await h.executeAsync(alice, { instruction: 'one too many' })).body.errors)).toBe('RATE_LIMITED');
    // The continuation runs a provider call: it needs a slot too, and gets one once b and c end.
    const toolResults = [{ toolCallId: paused.toolCalls![0]!.toolCallId, executionMs: 3, resultJson: '{"text":"A"}' }];
    const early = await h.execute(alice, { sessionId: paused.sessionId, turnId: paused.turnId, toolResults });
    expect(codeOf(early.body.errors)).toBe('RATE_LIMITED');
    for (const t of [b, c]) {
      await h.gql(h.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }', { s: t.sessionId, t: t.turnId });
    }
    const resumed = await h.execute(alice, { sessionId: paused.sessionId, turnId: paused.turnId, toolResults });
    expect(resumed.body.data?.execute).toMatchObject({ kind: 'FINAL', turnId: paused.turnId });
  });

  it('frees the slot of a turn swept from under this instance', async () => {
    const held = await startSlow(alice, 'will be swept');
    await startSlow(alice, 'keeps running');
    expect(codeOf((await h.executeAsync(alice, { instruction: 'full' })).body.errors)).toBe('RATE_LIMITED');
    // Another instance's sweeper failed the turn (its lease looked expired): the runner here notices and lets go.
    await h.gateway.sessions.lifecycle.failTurn(alice, held.sessionId, held.turnId, { errors: ['interrupted elsewhere'] });
    await eventually(async () => (await h.executeAsync(alice, { instruction: 'fits again' })).body.errors === undefined);
  });
});

describeWithRedis('budgets shared through Redis', () => {
  describeWithMysql('two instances', () => {
    let fake: FakeOpenAI;
    let databaseUrl: string;
    let a: TestGateway;
    let b: TestGateway;
    beforeAll(async () => {
      fake = await startFakeOpenAI();
      databaseUrl = await createMysqlDatabase();
      const env = { RATE_LIMIT_EXECUTES_PER_MINUTE: '3', MAX_TURNS_IN_FLIGHT_PER_USER: '2' };
      const bus = { keyPrefix: `test-${randomUUID()}:` };
      a = await startGateway({ ...EXECUTE_SETUP, database: { url: databaseUrl }, bus, provider: fake, env });
      b = await startGateway({ ...EXECUTE_SETUP, peerOf: a, env });
    }, 30_000);
    afterAll(async () => {
      await b.close();
      await a.close();
      await fake.close();
      await dropMysqlDatabase(databaseUrl);
    });

    it('counts executes per minute across instances', async () => {
      expect((await a.execute(carol, { instruction: '1 on A' })).body.data?.execute.kind).toBe('FINAL');
      expect((await b.execute(carol, { instruction: '2 on B' })).body.data?.execute.kind).toBe('FINAL');
      expect((await a.execute(carol, { instruction: '3 on A' })).body.data?.execute.kind).toBe('FINAL');
      expect(codeOf((await b.execute(carol, { instruction: '4 on B' })).body.errors)).toBe('RATE_LIMITED');
      expect(codeOf((await a.execute(carol, { instruction: '5 on A' })).body.errors)).toBe('RATE_LIMITED');
      expect((await b.execute(bob, { instruction: 'bob on B' })).body.data?.execute.kind).toBe('FINAL');
    });

    it('counts turns in flight across instances and frees them when an instance shuts down', async () => {
      fake.enqueue({ kind: 'hang' }, { kind: 'hang' });
      expect((await a.executeAsync(alice, { instruction: 'slow on A' })).body.errors).toBeUndefined();
      const onB = (await b.executeAsync(alice, { instruction: 'slow on B' })).body.data!.executeAsync;
      expect((await a.executeAsync(alice, { instruction: 'third on A' })).body.errors?.[0]?.extensions?.budget).toBe('turnsInFlight');
      await a.gateway.close();
      // A's turn ended (interrupted) and its slot went with it.
      fake.enqueue({ kind: 'text', chunks: ['fits'] });
      const again = await b.execute(alice, { instruction: 'fits after A left' });
      expect(again.body.data?.execute.kind).toBe('FINAL');
      await b.gql(b.tokenOf(alice), 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }', { s: onB.sessionId, t: onB.turnId });
    });

    it('lets the slots of an instance that died lapse after their lease', async () => {
      const stores = redisBudgetStores(
        { executesPerMinute: 0, orgExecutesPerMinute: 0, turnsInFlightPerUser: 1 },
        { url: redisUrl!, keyPrefix: `test-${randomUUID()}:`, timeoutMs: 1000, logger: createLogger('silent') },
      );
      try {
        expect(await stores.slots.hold('k', 'died-with-its-instance', 1, 300)).toBe(true);
        expect(await stores.slots.hold('k', 'next', 1, 300)).toBe(false);
        await new Promise((r) => setTimeout(r, 400));
        expect(await stores.slots.hold('k', 'next', 1, 300)).toBe(true);
        const raw = new Redis(redisUrl!);
        expect(await raw.keys('*died-with*')).toEqual([]);
        await raw.quit();
      } finally {
        await stores.slots.close();
        await stores.close?.();
      }
    });
  });
});

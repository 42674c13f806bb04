import type { OrgScope } from '../../src/domain/caller';
import type { ChainTurn } from '../../src/domain/chain';
import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { ChainHistoryCache } from '../../src/sessions/chain-history-cache';
import type { ChainTurnSource } from '../../src/sessions/session-store.port';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice, EXECUTE_SETUP, globexAdmin, mallory, startGateway, type TestGateway } from '../support/testkit';

/** The store's reads as the cache asks for them: from which turn, and how many rows came back. */
class CountedSource implements ChainTurnSource {
  readonly reads: { afterSequence: number; rows: number }[] = [];

  constructor(private readonly inner: ChainTurnSource) {}

  async chainTurnsAfter(scope: OrgScope, sessionId: string, afterSequence: number, limit: number): Promise<ChainTurn[]> {
    const rows = await this.inner.chainTurnsAfter(scope, sessionId, afterSequence, limit);
    this.reads.push({ afterSequence, rows: rows.length });
    return rows;
  }
}

const completion = (n: number) => ({
  agentAnswerSummary: `answer ${n}`,
  fullAgentAnswerUrl: null,
  openAIResponseId: `resp_${n}`,
  openAIResponseReceivedDate: new Date(),
  openAIChainExpiresDate: new Date(Date.now() + 3_600_000),
});

/**
 * The planner's cache of settled turns over the SQL store: a follow-on reads only the turns
 * after those it holds, and what it returns is what an uncached read of the newest turns
 * returns, also when another instance (its own connection to the same database) adds and
 * settles turns.
 */
function cacheSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let otherDb: GatewayDatabase;
  let store: SessionStore;
  let other: SessionStore;
  let source: CountedSource;
  let cache: ChainHistoryCache;

  beforeAll(async () => {
    t = await open();
    otherDb = await openGatewayDatabase({ databaseUrl: t.url, dataDir: t.dataDir, poolSize: 2, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await otherDb.close();
    await t.dispose();
  });
  beforeEach(() => {
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => {} } });
    other = createSessionStore({ db: otherDb, events: { turnStatusChanged: () => {} } });
    source = new CountedSource(store.batch);
    cache = new ChainHistoryCache(source, { window: 5, maxObjects: 1_000 });
  });

  /** A session of `n` completed turns, written by `by`. */
  async function sessionWith(n: number, by = store): Promise<string> {
    const session = await by.lifecycle.createSession(alice, { name: 'Cached', agentContextId: 'ac-1' });
    for (let i = 1; i <= n; i++) await settledTurn(session.id, by);
    return session.id;
  }

  async function settledTurn(sessionId: string, by = store): Promise<void> {
    const turn = await by.lifecycle.addTurn(alice, sessionId, {
      instructionSummary: 'q',
      activeFileRefs: [{ path: 'a.ts', contentHash: 'h', sizeBytes: 1, isTouched: true, wasSentToLLM: true, wasTooLargeToSend: false }],
    });
    await by.lifecycle.completeTurn(alice, sessionId, turn.id, completion(turn.sequenceNumber));
  }

  /** What the planner would have read without the cache. */
  const uncached = (sessionId: string, limit = 5) => store.batch.chainTurnsAfter(alice, sessionId, 0, limit);

  it('reads only the turns after the settled ones it holds, one statement per follow-on', async () => {
    const sessionId = await sessionWith(3);
    expect(await cache.chainTurns(alice, sessionId, 5)).toEqual(await uncached(sessionId));
    await settledTurn(sessionId);
    t.statements.length = 0;
    const turns = await cache.chainTurns(alice, sessionId, 5);
    expect(t.statements).toHaveLength(1);
    expect(t.statements[0]).toMatch(/sequence_number > \?/);
    expect(turns).toEqual(await uncached(sessionId));
    expect(turns.map((x) => x.sequenceNumber)).toEqual([1, 2, 3, 4]);
    expect(source.reads).toEqual([
      { afterSequence: 0, rows: 3 },
      { afterSequence: 3, rows: 1 },
    ]);
  });

  it('keeps the newest turns of the window as the session grows past it', async () => {
    const sessionId = await sessionWith(4);
    await cache.chainTurns(alice, sessionId, 5);
    for (let i = 0; i < 3; i++) await settledTurn(sessionId);
    const turns = await cache.chainTurns(alice, sessionId, 5);
    expect(turns.map((x) => x.sequenceNumber)).toEqual([3, 4, 5, 6, 7]);
    expect(turns).toEqual(await uncached(sessionId));
    expect((await cache.chainTurns(alice, sessionId, 2)).map((x) => x.sequenceNumber)).toEqual([6, 7]);
    expect(source.reads.map((r) => r.afterSequence)).toEqual([0, 4, 7]);
  });

  it('reads a PENDING turn again until it settles, and sees what another instance added and settled', async () => {
    const sessionId = await sessionWith(2);
    await cache.chainTurns(alice, sessionId, 5);
    const running = await other.lifecycle.addTurn(alice, sessionId, { instructionSummary: 'on B' });
    expect((await cache.chainTurns(alice, sessionId, 5)).at(-1)).toMatchObject({ id: running.id, status: 'PENDING', conversationId: null });
    // A PENDING turn's chain fields still change: the provider lost its chain, it retries on its own.
    await other.lifecycle.restartTurnChain(alice, sessionId, running.id, {
      reason: 'LOST_BY_PROVIDER',
      activeFileRefs: [],
      chunkRefs: [],
      requestMetadata: { retrievalPathPrefixes: null, skippedSnippets: [] },
      warnings: [],
    });
    expect((await cache.chainTurns(alice, sessionId, 5)).at(-1)).toMatchObject({ status: 'PENDING', conversationId: running.id });
    await other.lifecycle.completeTurn(alice, sessionId, running.id, completion(3));
    await settledTurn(sessionId, other);
    const turns = await cache.chainTurns(alice, sessionId, 5);
    expect(turns).toEqual(await uncached(sessionId));
    expect(turns.slice(-2)).toMatchObject([{ id: running.id, status: 'COMPLETED', openAIResponseId: 'resp_3' }, { sequenceNumber: 4 }]);
    expect(source.reads.map((r) => r.afterSequence)).toEqual([0, 2, 2, 2]);
    await cache.chainTurns(alice, sessionId, 5);
    expect(source.reads.at(-1)).toEqual({ afterSequence: 4, rows: 0 });
  });

  it("keys what it holds by org: another org's caller reads for itself, and gets none of the session's turns", async () => {
    const sessionId = await sessionWith(3);
    expect(await cache.chainTurns(alice, sessionId, 5)).toHaveLength(3);
    expect(await cache.chainTurns(mallory, sessionId, 5)).toEqual([]);
    expect(source.reads.at(-1)).toEqual({ afterSequence: 0, rows: 0 });
  });
}

describe('chain history cache on embedded SQLite', () => cacheSuite(sqliteTestDatabase));
describeWithMysql('chain history cache on MySQL/MariaDB', () => cacheSuite(mysqlTestDatabase));

const runOn = async (on: TestGateway, input: Record<string, unknown>) => {
  const res = await on.execute(alice, input);
  if (!res.body.data) throw new Error(JSON.stringify(res.body.errors));
  return res.body.data.execute;
};

describe('chain history cache of a gateway', () => {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway(EXECUTE_SETUP);
  });
  afterAll(() => h.close());

  it('reads only the turns after those settled at its previous plan on each follow-on execute', async () => {
    const reads = jest.spyOn(h.gateway.sessions.batch, 'chainTurnsAfter');
    try {
      const first = await runOn(h, { instruction: 'one' });
      for (const instruction of ['two', 'three', 'four']) await runOn(h, { sessionId: first.sessionId, instruction });
      const rows = await Promise.all(reads.mock.results.map((r) => r.value as Promise<unknown[]>));
      expect(reads.mock.calls.map(([, , afterSequence]) => afterSequence)).toEqual([0, 1, 2]);
      expect(rows.map((r) => r.length)).toEqual([1, 1, 1]);
    } finally {
      reads.mockRestore();
    }
  });

  it("refuses another org's caller the session whose turns it holds, and refuses a deleted session (NOT_FOUND)", async () => {
    const first = await runOn(h, { instruction: 'one' });
    await runOn(h, { sessionId: first.sessionId, instruction: 'two' });
    const globexAgent = await h.gateway.services.contexts.upsertAgentContext(globexAdmin, { name: 'G', vectorCollection: 'g', defaultModel: 'gpt-4.1-mini' });
    const foreign = await h.execute(mallory, { agentContextId: globexAgent.id, sessionId: first.sessionId, instruction: 'mine?' });
    expect(foreign.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/session/), extensions: { code: 'NOT_FOUND' } });
    expect(h.fake.requests.filter((r) => JSON.stringify(r.body).includes('mine?'))).toEqual([]);
    await h.gateway.sessions.lifecycle.deleteSession(alice, first.sessionId);
    const deleted = await h.execute(alice, { sessionId: first.sessionId, instruction: 'three' });
    expect(deleted.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

/** Each instance holds its own cache, and plans on what every instance wrote. */
describeWithMysql('chain history cache of two gateway instances on MySQL/MariaDB', () => {
  let a: TestGateway;
  let b: TestGateway;
  beforeAll(async () => {
    a = await startGateway({ ...EXECUTE_SETUP, database: 'mysql' });
    b = await startGateway({ ...EXECUTE_SETUP, peerOf: a });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it("continues the chain from a turn another instance settled since this one's last plan", async () => {
    const first = await runOn(a, { instruction: 'one' });
    await runOn(a, { sessionId: first.sessionId, instruction: 'two' });
    const onB = await runOn(b, { sessionId: first.sessionId, instruction: 'three, on B' });
    a.fake.requests.length = 0;
    await runOn(a, { sessionId: first.sessionId, instruction: 'four' });
    const settledOnB = await a.turn(alice, first.sessionId, onB.turnId);
    expect(settledOnB.openAIResponseId).toBeTruthy();
    expect(a.fake.requests.at(-1)?.body.previous_response_id).toBe(settledOnB.openAIResponseId);
  });
});

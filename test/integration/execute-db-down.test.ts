import { createConnection } from 'mysql2/promise';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';
import { startTcpProxy, type CutMode, type TcpProxy } from '../support/tcp-proxy';
import { subscribe, wsClient } from '../support/ws';
import { alice, EXECUTE_SETUP, startGateway, type TestGateway, type TurnView } from '../support/testkit';

/** Generous: "fails fast" means seconds, not the minutes a lost packet can wait. */
const FAST_MS = 10_000;

/**
 * Issues 3 and 8: the database goes away and comes back (a TCP proxy in front of MariaDB
 * is cut), either refusing connections (reset) or silently dropping every packet
 * (blackhole). Nothing hangs, nothing is written half, nothing needs a restart.
 */
describeWithMysql('the database going away and coming back', () => {
  let direct: string;
  let proxy: TcpProxy;
  let h: TestGateway;
  beforeAll(async () => {
    direct = await createMysqlDatabase();
    const url = new URL(direct);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 3306));
    const viaProxy = new URL(direct);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    h = await startGateway({
      ...EXECUTE_SETUP,
      database: { url: viaProxy.toString() },
      env: {
        TURN_LEASE_SECONDS: '2',
        DB_POOL_SIZE: '4',
        DB_CONNECT_TIMEOUT_MS: '500',
        DB_QUERY_TIMEOUT_MS: '3000',
        LLM_TIMEOUT_MS: '2000',
        LLM_MAX_RETRIES: '0',
      },
    });
  });
  afterEach(() => proxy.restore());
  afterAll(async () => {
    await h.close();
    await proxy.close();
    await dropMysqlDatabase(direct);
  });

  const countTurns = async (): Promise<number> => {
    const conn = await createConnection({ uri: direct });
    try {
      const [rows] = await conn.query('SELECT COUNT(*) AS n FROM agent_session_turns');
      return Number((rows as { n: number }[])[0]?.n);
    } finally {
      await conn.end();
    }
  };
  const readyz = async () => (await fetch(`${h.url}/readyz`)).status;
  /** Runs `request`, checking it answers within FAST_MS. */
  const fast = async <T>(request: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await request();
    expect(Date.now() - started).toBeLessThan(FAST_MS);
    return result;
  };
  /** Polls the turn (reads fail while the database is away) until it left PENDING. */
  const settled = async (sessionId: string, turnId: string): Promise<TurnView> => {
    let turn: TurnView | null = null;
    await until('the turn to leave PENDING', async () => {
      turn = await h.turn(alice, sessionId, turnId);
      return turn.status !== 'PENDING';
    });
    return turn!;
  };
  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen in time`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  describe.each<CutMode>(['reset', 'blackhole'])('cut by %s', (mode) => {
    it('answers 503 on /readyz and SERVICE_UNAVAILABLE to every request, writes nothing, and serves again soon after it returns', async () => {
      const token = h.tokenOf(alice);
      const first = (await h.execute(alice, { instruction: 'While all is well' })).body.data!.execute;
      const turnsBefore = await countTurns();
      h.fake.requests.length = 0;
      proxy.cut(mode);

      await until('/readyz to answer 503', async () => (await fast(readyz)) === 503);
      const queries = [
        '{ agentSessions(first: 5) { totalCount edges { node { name } } } }',
        `{ agentSession(id: "${first.sessionId}") { name turns { edges { node { status } } } } }`,
        `mutation { updateAgentSession(id: "${first.sessionId}", patch: { name: "renamed in the outage" }) { name } }`,
      ];
      for (const query of queries) {
        const res = await fast(() => h.gql(token, query));
        expect({ query, errors: res.body.errors?.map((e) => e.extensions?.code) }).toEqual({ query, errors: ['SERVICE_UNAVAILABLE'] });
      }
      for (const input of [{ sessionId: first.sessionId, instruction: 'During the outage' }, { instruction: 'A new session during the outage' }]) {
        const res = await fast(() => h.execute(alice, input));
        expect(res.body.errors?.[0]).toMatchObject({
          message: 'the session store is unavailable; no turn was recorded, try again later',
          extensions: { code: 'SERVICE_UNAVAILABLE' },
        });
      }
      const rest = await fast(() => h.rest(alice, { agentContextId: h.agentContextId, instruction: 'REST during the outage' }));
      expect(rest).toMatchObject({ status: 503, body: { errorCode: 'SERVICE_UNAVAILABLE' } });
      const client = wsClient(h.url, token);
      try {
        const feed = subscribe(client, 'subscription($s: ID!) { turnStatusChanged(sessionId: $s) { eventId } }', { s: first.sessionId });
        await fast(() => feed.done.catch(() => undefined));
        expect(feed.results[0]?.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        await client.dispose();
      }
      expect(h.fake.requests).toHaveLength(0);

      proxy.restore();
      await until('/readyz to answer 200', async () => (await readyz()) === 200);
      await until('queries to work', async () => (await h.gql(token, queries[0]!)).body.errors === undefined);
      expect(await countTurns()).toBe(turnsBefore);
      const after = await h.execute(alice, { sessionId: first.sessionId, instruction: 'After the outage' });
      expect(after.body.data?.execute.kind).toBe('FINAL');
      expect((await h.turn(alice, first.sessionId, first.turnId)).status).toBe('COMPLETED');
    });

    it('keeps the answer of a turn running when the database went away and stores it COMPLETED once it is back', async () => {
      h.fake.enqueue({ kind: 'text', chunks: ['late', ' answer'], delayMs: 600 });
      const waiting = h.execute(alice, { instruction: 'The database dies while the model answers' });
      await h.fake.waitForRequests(h.fake.requests.length + 1);
      proxy.cut(mode);
      const res = await fast(() => waiting);
      expect(res.body.errors?.[0]).toMatchObject({
        message: 'the session store is unavailable; the turn is stored as soon as it is back',
        extensions: { code: 'SERVICE_UNAVAILABLE', sessionId: expect.any(String), turnId: expect.any(String) },
      });
      const { sessionId, turnId } = res.body.errors![0]!.extensions as { sessionId: string; turnId: string };
      proxy.restore();
      const turn = await settled(sessionId, turnId);
      expect(turn).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'late answer', errors: [] });
      expect((await h.blob(alice, turn.fullAgentAnswerUrl!)).text).toBe('late answer');
    });

    it("fails a turn whose provider call failed while the database was away, with the provider's reason, once it is back", async () => {
      h.fake.enqueue({ kind: 'hang' });
      const waiting = h.execute(alice, { instruction: 'The model times out while the database is away' });
      await h.fake.waitForRequests(h.fake.requests.length + 1);
      proxy.cut(mode);
      const res = await fast(() => waiting);
      expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'LLM_TIMEOUT', turnId: expect.any(String) });
      const { sessionId, turnId } = res.body.errors![0]!.extensions as { sessionId: string; turnId: string };
      proxy.restore();
      expect(await settled(sessionId, turnId)).toMatchObject({ status: 'FAILED', errors: ['the model did not finish answering within 2000 ms'] });
    });
  });
});

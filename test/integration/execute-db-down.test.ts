import { createConnection } from 'mysql2/promise';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { alice, startExecuteHarness, type ExecuteHarness } from '../support/execute';
import { describeWithMysql } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/** Issue 3 point 11: the database goes away during execute (a TCP proxy in front of MariaDB is cut). */
describeWithMysql('execute while the database is down', () => {
  let direct: string;
  let proxy: TcpProxy;
  let h: ExecuteHarness;
  beforeAll(async () => {
    direct = await createMysqlDatabase();
    const url = new URL(direct);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 3306));
    const viaProxy = new URL(direct);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    h = await startExecuteHarness({ databaseUrl: viaProxy.toString(), env: { TURN_LEASE_SECONDS: '2', DB_POOL_SIZE: '4' } });
  });
  afterAll(async () => {
    proxy.restore();
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

  it('refuses with SERVICE_UNAVAILABLE and writes no turn while the database cannot be reached', async () => {
    const first = (await h.execute(alice, { instruction: 'While all is well' })).body.data!.execute;
    expect(await countTurns()).toBe(1);
    h.fake.requests.length = 0;
    proxy.cut();
    for (const input of [{ sessionId: first.sessionId, instruction: 'During the outage' }, { instruction: 'A new session during the outage' }]) {
      const res = await h.execute(alice, input);
      expect(res.body.errors?.[0]).toMatchObject({
        message: 'the session store is unavailable; no turn was recorded, try again later',
        extensions: { code: 'SERVICE_UNAVAILABLE' },
      });
    }
    const rest = await h.rest(alice, { agentContextId: h.agentContextId, instruction: 'REST during the outage' });
    expect(rest).toMatchObject({ status: 503, body: { errorCode: 'SERVICE_UNAVAILABLE' } });
    expect(h.fake.requests).toHaveLength(0);
    proxy.restore();
    expect(await countTurns()).toBe(1);
    const after = await h.execute(alice, { sessionId: first.sessionId, instruction: 'After the outage' });
    expect(after.body.data?.execute.kind).toBe('FINAL');
  });

  it('leaves a turn cut off mid-call PENDING under its lease, and a sweeper fails it once the database is back', async () => {
    h.fake.enqueue({ kind: 'text', chunks: ['late', ' answer'], delayMs: 400 });
    const waiting = h.execute(alice, { instruction: 'The database dies while the model answers' });
    await h.fake.waitForRequests(h.fake.requests.length + 1);
    proxy.cut();
    const res = await waiting;
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', turnId: expect.any(String) });
    const { sessionId, turnId } = res.body.errors![0]!.extensions as { sessionId: string; turnId: string };
    proxy.restore();
    expect((await h.turn(alice, sessionId, turnId)).status).toBe('PENDING');
    h.clock.advance(3000);
    await h.t.gateway.orchestrator.sweepExpiredTurns();
    expect(await h.turn(alice, sessionId, turnId)).toMatchObject({
      status: 'FAILED',
      errors: ['interrupted: the gateway instance running this turn stopped before it finished'],
    });
  });
});

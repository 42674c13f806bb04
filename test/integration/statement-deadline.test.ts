import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { isDomainError } from '../../src/domain/errors';
import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysql, mysqlUrl } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const LIMIT_MS = 800;
/** "Gone within about a second", with room for a loaded machine (the server checks for the kill between rows). */
const GONE_MS = 1_500;

/**
 * Issue 35 item 6: a statement the gateway gave up on must not go on running on the server.
 * Every pooled connection runs under the server's statement limit (MariaDB max_statement_time),
 * so a slow statement ends on the server at the deadline whether the server could still answer
 * (the client hears ER_STATEMENT_TIMEOUT) or not (a partition: the client's own deadline fires).
 */
describeWithMysql('statements end on the server at the deadline (MariaDB)', () => {
  let url: string;
  let proxy: TcpProxy;
  let db: GatewayDatabase;
  let viaProxy: GatewayDatabase;
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-deadline-'));

  /** Statements of this test's marker still running on the server, as PROCESSLIST shows them. */
  const running = async (marker: string): Promise<number> => {
    const conn = await createConnection({ uri: mysqlUrl as string });
    try {
      const [rows] = await conn.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'",
        [`%${marker}%`],
      );
      return Number((rows as { n: number }[])[0]?.n);
    } finally {
      await conn.end();
    }
  };
  /** Fails unless no statement with `marker` runs on the server within `ms`. */
  const goneWithin = async (marker: string, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while ((await running(marker)) > 0) {
      if (Date.now() > deadline) throw new Error(`the statement ${marker} still runs on the server ${ms} ms after the gateway gave up`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** The error `work` fails with; fails the test if it succeeds. */
  const failure = async (work: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> => {
    const started = Date.now();
    const error = await work().then(
      () => new Error('the slow statement succeeded'),
      (e: unknown) => e,
    );
    return { error, ms: Date.now() - started };
  };
  const open = (databaseUrl: string) =>
    openGatewayDatabase({ databaseUrl, dataDir, poolSize: 2, queryTimeoutMs: LIMIT_MS, connectTimeoutMs: 500, logger: createLogger('silent') });

  beforeAll(async () => {
    url = await createMysqlDatabase();
    const direct = new URL(url);
    proxy = await startTcpProxy(direct.hostname, Number(direct.port || 3306));
    const proxied = new URL(url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    db = await open(url);
    viaProxy = await open(proxied.toString());
  });
  afterAll(async () => {
    await db.close();
    await viaProxy.close();
    await proxy.close();
    await dropMysqlDatabase(url);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends a slow read on the server at the limit and tells the client SERVICE_UNAVAILABLE', async () => {
    const { error, ms } = await failure(() => db.read("SELECT SLEEP(20) AS slow, 'marker-read' AS m"));
    expect(isDomainError(error) && error.code).toBe('SERVICE_UNAVAILABLE');
    expect(ms).toBeLessThan(LIMIT_MS + 1_000);
    await goneWithin('marker-read', GONE_MS);
    // The connection it ran on is still good.
    expect(await db.read<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('ends a slow statement inside a transaction, rolling that back', async () => {
    const tx = await failure(() =>
      db.sqlTransaction(async (t) => {
        await t.rows("SELECT SLEEP(20) AS slow, 'marker-tx' AS m");
        return t.commitWith([]);
      }),
    );
    expect(isDomainError(tx.error) && tx.error.code).toBe('SERVICE_UNAVAILABLE');
    await goneWithin('marker-tx', GONE_MS);
  });

  it('ends the statement on the server when the network drops every packet and the client gave up', async () => {
    // Warm the pool so the statement goes out on an open connection before the partition.
    await viaProxy.read('SELECT 1 AS one');
    const slow = failure(() => viaProxy.read("SELECT SLEEP(20) AS slow, 'marker-cut' AS m"));
    await new Promise((r) => setTimeout(r, 200));
    expect(await running('marker-cut')).toBe(1);
    proxy.cut('blackhole');
    const { error, ms } = await slow;
    expect(isDomainError(error) && error.code).toBe('SERVICE_UNAVAILABLE');
    expect(ms).toBeLessThan(LIMIT_MS + 2_000);
    await goneWithin('marker-cut', GONE_MS);
    proxy.restore();
    // The connection that missed its deadline was discarded, not handed out again.
    expect(await viaProxy.read<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

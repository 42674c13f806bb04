import { randomUUID } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { StoreUnavailableError } from '../../src/persistence/db-errors';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/** Statements of other connections whose text holds `marker` (the asking statement's own text does not: the marker is bound, split). */
async function runningWith(url: string, marker: string): Promise<number> {
  const conn = await createConnection({ uri: url });
  try {
    const [rows] = await conn.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE CONCAT('%', 'dead', 'line-', ?, '%')",
      [marker],
    );
    return Number((rows as { n: number | string }[])[0]?.n);
  } finally {
    await conn.end();
  }
}

/**
 * Issue 35.6: every statement runs under a limit the server enforces (MariaDB's
 * max_statement_time), so nothing the gateway gave up on goes on running there.
 */
describeWithMysql('statement deadlines end on the server (MariaDB)', () => {
  let url: string;
  let db: GatewayDatabase;
  const DEADLINE_MS = 600;

  beforeAll(async () => {
    url = await createMysqlDatabase();
    db = await openGatewayDatabase({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 2, queryTimeoutMs: DEADLINE_MS, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await db.close();
    await dropMysqlDatabase(url);
  });

  it.each([
    ['a plain read', (sql: string) => db.read(sql)],
    ['ORM work', (sql: string) => db.run((em) => em.query(sql))],
    ['a transaction', (sql: string) => db.sqlTransaction((tx) => tx.rows(sql))],
  ])('fails %s past the deadline as unavailable, and the statement is gone from the server', async (_what, run) => {
    const marker = randomUUID();
    const started = Date.now();
    const outcome = await run(`SELECT SLEEP(5) AS s, 'deadline-${marker}' AS marker`).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(outcome).toBeInstanceOf(StoreUnavailableError);
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(took).toBeLessThan(DEADLINE_MS + 1_500);
    expect(await runningWith(url, marker)).toBe(0);
    // The server ended the statement and said so: the connection goes on serving.
    expect(await db.read<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('sets the limit on every connection of the pool, the one opened at start-up too', async () => {
    const limits = await Promise.all(
      [1, 2].map(() => db.run((em) => em.query<{ limit: number | string }[]>('SELECT @@SESSION.max_statement_time AS `limit`, SLEEP(0.2) AS s'))),
    );
    expect(limits.map(([row]) => Number(row?.limit))).toEqual([DEADLINE_MS / 1000, DEADLINE_MS / 1000]);
  });
});

describeWithMysql('the MySQL pool’s use, as /metrics reports it', () => {
  let url: string;
  let db: GatewayDatabase;

  beforeAll(async () => {
    url = await createMysqlDatabase();
    db = await openGatewayDatabase({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 2, queryTimeoutMs: 10_000, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await db.close();
    await dropMysqlDatabase(url);
  });

  it('counts the connections in use and the statements waiting for one', async () => {
    let done = 0;
    let twoDone: () => void = () => undefined;
    const firstTwo = new Promise<void>((resolve) => (twoDone = resolve));
    const five = Array.from({ length: 5 }, () =>
      db
        .run((em) => em.query('SELECT SLEEP(0.6) AS s'))
        .finally(() => {
          if (++done === 2) twoDone();
        }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(db.poolUse()).toEqual({ size: 2, inUse: 2, idle: 0, waiting: 3 });
    // The first two hand their connections to the next two; the fifth still waits.
    await firstTwo;
    await new Promise((r) => setTimeout(r, 200));
    expect(db.poolUse()).toEqual({ size: 2, inUse: 2, idle: 0, waiting: 1 });
    await Promise.all(five);
    expect(db.poolUse()).toEqual({ size: 2, inUse: 0, idle: 2, waiting: 0 });
  });
});

/**
 * The client's deadline, for a server that no longer answers on the connections the pool holds
 * (a firewall or NAT forgot them) while new ones work: the statement fails, its connection and
 * the idle ones are discarded, and closing never waits for them.
 */
describeWithMysql('connections the network forgot', () => {
  let direct: string;
  let proxy: TcpProxy;
  let db: GatewayDatabase;
  const DEADLINE_MS = 600;

  beforeAll(async () => {
    direct = await createMysqlDatabase();
    const url = new URL(direct);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 3306));
    url.host = `127.0.0.1:${proxy.port}`;
    db = await openGatewayDatabase({
      databaseUrl: url.toString(),
      dataDir: '/nonexistent',
      poolSize: 2,
      connectTimeoutMs: 1_000,
      queryTimeoutMs: DEADLINE_MS,
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await proxy.close();
    await dropMysqlDatabase(direct);
  });

  /** Opens both pooled connections, then loses them: they stay open and nothing passes on them; new ones work. */
  const forgetOpenConnections = async () => {
    await Promise.all([1, 2].map(() => db.run((em) => em.query('SELECT SLEEP(0.1) AS s'))));
    proxy.cut('blackhole');
    proxy.restore();
  };

  it('fails a statement on a lost connection as unavailable shortly after the deadline, then serves on new connections', async () => {
    await forgetOpenConnections();
    const started = Date.now();
    await expect(db.read('SELECT 1 AS one')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS + 2_000);
    const again = Date.now();
    expect(await db.read<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    // Not the other lost connection: it was idle, and discarded with the first.
    expect(Date.now() - again).toBeLessThan(DEADLINE_MS);
  });

  it('closes within a couple of seconds while a statement waits on a lost connection', async () => {
    await forgetOpenConnections();
    const stuck = db.read('SELECT 1 AS one').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await db.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await stuck).toBeInstanceOf(StoreUnavailableError);
  });
});

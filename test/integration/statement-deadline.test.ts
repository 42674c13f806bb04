import { randomUUID } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { StoreUnavailableError } from '../../src/persistence/db-errors';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';

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

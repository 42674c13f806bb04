import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { mysqlUrl } from './services';

export interface TestDatabase {
  readonly db: GatewayDatabase;
  /** The URL a second process (a gateway under test) would use; null for SQLite. */
  readonly url: string | null;
  readonly dataDir: string;
  /** Every SQL statement run since the last reset. */
  readonly statements: string[];
  dispose(): Promise<void>;
}

export type TestDatabaseFactory = () => Promise<TestDatabase>;

/** A fresh embedded SQLite database in its own temporary directory. */
export const sqliteTestDatabase: TestDatabaseFactory = () => openTestDatabase(null, 1);

/** A fresh database of its own on the MySQL/MariaDB server of TEST_MYSQL_URL. */
export const mysqlTestDatabase: TestDatabaseFactory = async () => openTestDatabase(await createMysqlDatabase(), 20);

async function openTestDatabase(url: string | null, poolSize: number): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  const statements: string[] = [];
  const db = await openGatewayDatabase({
    databaseUrl: url,
    dataDir,
    poolSize,
    logger: createLogger('silent'),
    onQuery: (sql) => statements.push(sql),
  });
  return {
    db,
    url,
    dataDir,
    statements,
    async dispose() {
      await db.close();
      if (url) await dropMysqlDatabase(url);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates an empty database named for this test and returns its URL. */
export async function createMysqlDatabase(): Promise<string> {
  if (!mysqlUrl) throw new Error('TEST_MYSQL_URL is not reachable');
  const name = `gw_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const conn = await createConnection({ uri: mysqlUrl });
  try {
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await conn.end();
  }
  const url = new URL(mysqlUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropMysqlDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const conn = await createConnection({ uri: mysqlUrl ?? url });
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await conn.end();
  }
}

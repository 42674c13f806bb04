import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { DataSource, type EntityManager, type Logger as OrmLogger } from 'typeorm';
import { contextEntities, type ContextEntities } from '../contexts/context.entities';
import type { Logger } from '../logger';
import { dialectOf, type Dialect } from './dialect';
import { idempotencyEntities, type IdempotencyEntities } from './idempotency.entities';
import { migrations } from './migrations';
import { provenanceEntities, type ProvenanceEntities } from './provenance.entities';
import { sessionEntities, type SessionEntities } from './session.entities';

export interface DatabaseOptions {
  /** mysql://user:pass@host:port/db; absent means the embedded SQLite file under dataDir. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly poolSize: number;
  readonly logger: Logger;
  /** Called with every SQL statement; the query-count tests listen here. */
  readonly onQuery?: (sql: string) => void;
}

export interface Database {
  readonly dataSource: DataSource;
  readonly dialect: Dialect;
  readonly entities: SessionEntities & ContextEntities & ProvenanceEntities & IdempotencyEntities;
  /** Runs `work` in one transaction, serialised on SQLite and retried on MySQL deadlocks. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const DEADLOCK_ERRNOS = new Set([1213, 1205]);
const MAX_ATTEMPTS = 4;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const dialect = options.databaseUrl ? await probeMysqlDialect(options.databaseUrl) : 'sqlite';
  const entities = {
    ...sessionEntities(dialect),
    ...contextEntities(dialect),
    ...provenanceEntities(dialect),
    ...idempotencyEntities(dialect),
  };
  const common = {
    entities: Object.values(entities),
    migrations,
    migrationsRun: true,
    synchronize: false,
    logging: ['query', 'error'] as ('query' | 'error')[],
    logger: new OrmLog(options.logger, options.onQuery),
  };
  let dataSource: DataSource;
  if (options.databaseUrl) {
    dataSource = new DataSource({
      ...common,
      type: dialect === 'mariadb' ? 'mariadb' : 'mysql',
      url: options.databaseUrl,
      timezone: 'Z',
      charset: 'utf8mb4_unicode_ci',
      extra: { connectionLimit: options.poolSize },
    });
  } else {
    mkdirSync(options.dataDir, { recursive: true });
    dataSource = new DataSource({
      ...common,
      type: 'better-sqlite3',
      database: join(options.dataDir, 'gateway.sqlite'),
      enableWAL: true,
    });
  }
  await dataSource.initialize();
  let queue: Promise<unknown> = Promise.resolve();

  return {
    dataSource,
    dialect,
    entities,
    async transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
      if (dialect === 'sqlite') {
        // One connection: a second BEGIN while one is open would nest as a savepoint.
        const run = queue.then(() => dataSource.transaction(work));
        queue = run.catch(() => undefined);
        return run;
      }
      for (let attempt = 1; ; attempt++) {
        try {
          return await dataSource.transaction(work);
        } catch (e) {
          if (attempt >= MAX_ATTEMPTS || !isRetryable(e)) throw e;
          await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
        }
      }
    },
    async ping() {
      await dataSource.query('SELECT 1');
    },
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

function isRetryable(e: unknown): boolean {
  const errno = (e as { errno?: unknown; driverError?: { errno?: unknown } }).driverError?.errno ?? (e as { errno?: unknown }).errno;
  return typeof errno === 'number' && DEADLOCK_ERRNOS.has(errno);
}

/** TypeORM wants to know up front whether it talks to MariaDB; the server says so itself. */
async function probeMysqlDialect(url: string): Promise<Dialect> {
  const conn = await createConnection({ uri: url, connectTimeout: 5000 });
  try {
    const [rows] = await conn.query('SELECT VERSION() AS v');
    const version = String((rows as { v: string }[])[0]?.v ?? '');
    return dialectOf(version.toLowerCase().includes('mariadb') ? 'mariadb' : 'mysql');
  } finally {
    await conn.end();
  }
}

class OrmLog implements OrmLogger {
  constructor(
    private readonly out: Logger,
    private readonly onQuery?: (sql: string) => void,
  ) {}
  logQuery(query: string): void {
    this.onQuery?.(query);
  }
  logQueryError(error: string | Error, query: string): void {
    this.out.debug({ err: error, query }, 'sql statement failed');
  }
  logQuerySlow(time: number, query: string): void {
    this.out.warn({ ms: time, query }, 'slow sql statement');
  }
  logSchemaBuild(message: string): void {
    this.out.debug(message);
  }
  logMigration(message: string): void {
    this.out.info(message);
  }
  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.out.warn({ message }, 'typeorm');
    else this.out.debug({ message }, 'typeorm');
  }
}

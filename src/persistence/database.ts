import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { DataSource, type EntityManager, type EntitySchema, type Logger as OrmLogger, type QueryRunner } from 'typeorm';
import type { Logger } from '../logger';
import { isDeadlock, typedStoreError } from './db-errors';
import { dialectOf, type Dialect } from './dialect';
import { migrations } from './migrations';
import { MysqlStoreGuard } from './mysql-store-guard';

export interface DatabaseOptions {
  /** mysql://user:pass@host:port/db; absent means the embedded SQLite file under dataDir. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly poolSize: number;
  /** MySQL: longest wait for a connection (and for the reachability probe). */
  readonly connectTimeoutMs?: number;
  /** MySQL: longest one statement may run; its connection is then discarded. */
  readonly queryTimeoutMs?: number;
  readonly logger: Logger;
  /** Called with every SQL statement; the query-count tests listen here. */
  readonly onQuery?: (sql: string) => void;
  /** Wraps every statement's execution (metrics, traces); it must return what `run` returns. */
  readonly observeStatement?: StatementObserver;
}

/** Runs one SQL statement (`run`) and may time or trace it; `sql` is the statement text. */
export type StatementObserver = <T>(sql: string, run: () => Promise<T>) => Promise<T>;

/** Connections of the MySQL pool right now; null on the embedded database (one connection). */
export interface PoolUse {
  readonly size: number;
  readonly inUse: number;
  readonly idle: number;
  /** Statements waiting for a connection. */
  readonly waiting: number;
}

/** A value a plain statement binds: Dates and booleans are converted for the dialect (see `Sql`). */
export type SqlValue = string | number | boolean | Date | null;

/** What a write statement did. */
export interface SqlWrite {
  readonly affected: number;
  /** MySQL: the insert id, which `LAST_INSERT_ID(expr)` sets too; SQLite: the last rowid. */
  readonly insertId: number;
}

/**
 * Plain SQL for hot paths, written out once (no query builder, no entity hydration): `?`
 * placeholders on both dialects, unquoted identifiers, rows as the driver hands them out
 * (sessions/raw-values.ts reads them). Statements still pass the wrapper every statement
 * passes: typed store errors, the statement observer (metrics, traces) and the onQuery hook,
 * and SQLite's prepared-statement cache. Dates are bound as UTC datetime text on SQLite (the
 * format TypeORM writes) and as Dates on MySQL (the pool's timezone is UTC); booleans as 0/1.
 */
export interface Sql {
  readonly dialect: Dialect;
  /** The rows a SELECT (or a statement with RETURNING) yields. */
  rows<R>(statement: string, params?: readonly SqlValue[]): Promise<R[]>;
  run(statement: string, params?: readonly SqlValue[]): Promise<SqlWrite>;
}

/** Entity schemas by the name their feature reads them by; each feature brings its own. */
export type EntitySchemas = Readonly<Record<string, EntitySchema>>;

/**
 * The one connection to the gateway's database. `E` is what a feature sees of the entity
 * schemas: each store asks for its own tables only (`Database<SessionEntities>`), and the
 * composition root opens it with every feature's (see gateway-database.ts).
 */
export interface Database<E extends EntitySchemas = EntitySchemas> {
  readonly dataSource: DataSource;
  readonly dialect: Dialect;
  readonly entities: E;
  /** Runs `work` in one transaction, serialised on SQLite and retried on MySQL deadlocks. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  /** Plain SQL (see `Sql`) on the connection of `em`: inside `transaction`, its transaction; without, the pool. */
  sql(em?: EntityManager): Sql;
  /** Readiness: throws StoreUnavailableError unless the database answers (MySQL: within the connect timeout). */
  ping(): Promise<void>;
  /** The pool's use now (metrics). */
  poolUse(): PoolUse | null;
  close(): Promise<void>;
}

const MAX_ATTEMPTS = 4;

/**
 * Connects (MySQL/MariaDB when `databaseUrl` is set, else the embedded SQLite file), runs the
 * migrations and registers the entity schemas `entitiesFor` makes for the dialect found.
 */
export async function openDatabase<E extends EntitySchemas>(
  options: DatabaseOptions,
  entitiesFor: (dialect: Dialect) => E,
): Promise<Database<E>> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 3_000;
  const dialect = options.databaseUrl ? await probeMysqlDialect(options.databaseUrl, connectTimeoutMs) : 'sqlite';
  const entities = entitiesFor(dialect);
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
      extra: {
        connectionLimit: options.poolSize,
        connectTimeout: connectTimeoutMs,
        // Idle connections to a server that vanished are noticed by the kernel eventually.
        enableKeepAlive: true,
        keepAliveInitialDelay: 10_000,
        // mysql2 captures a stack trace on every query (for the async call site of an error):
        // ~20 µs of main-thread time per statement, 2% of a burst; store errors are typed and logged without it.
        trace: false,
      },
    });
  } else {
    mkdirSync(options.dataDir, { recursive: true });
    dataSource = new DataSource({
      ...common,
      type: 'better-sqlite3',
      database: join(options.dataDir, 'gateway.sqlite'),
      // WAL with synchronous=NORMAL: a commit is one write to the WAL, fsynced at checkpoints
      // instead of at every commit (FULL's fsync per commit serialised every turn change behind
      // the disk). A crash of the gateway loses nothing; a power loss may lose the last commits,
      // never consistency (README, "Embedded database").
      enableWAL: true,
      prepareDatabase: (db: { pragma(source: string): unknown }) => {
        db.pragma('synchronous = NORMAL');
      },
    });
  }
  // Migrations run here, before the guard: a long ALTER must not hit the statement deadline.
  await dataSource.initialize();
  let guard: MysqlStoreGuard | null = null;
  if (options.databaseUrl) {
    guard = new MysqlStoreGuard({
      url: options.databaseUrl,
      connectTimeoutMs,
      queryTimeoutMs: options.queryTimeoutMs ?? 30_000,
      logger: options.logger,
    });
    guard.attach((dataSource.driver as unknown as { pool: Parameters<MysqlStoreGuard['attach']>[0] }).pool);
  }
  typeStoreErrors(dataSource, options.observeStatement ?? ((_sql, run) => run()));
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
          if (attempt >= MAX_ATTEMPTS || !isDeadlock(e)) throw e;
          await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
        }
      }
    },
    sql(em = dataSource.manager) {
      return em.queryRunner ? sqlOn(em.queryRunner, dialect) : sqlOnPool(dataSource, dialect);
    },
    async ping() {
      if (guard) await guard.ping();
      else await dataSource.query('SELECT 1');
    },
    poolUse() {
      if (!options.databaseUrl) return null;
      const pool = (dataSource.driver as unknown as { pool?: MysqlPoolInternals }).pool;
      if (!pool) return null;
      const size = pool._allConnections?.length ?? 0;
      const idle = pool._freeConnections?.length ?? 0;
      return { size: options.poolSize, inUse: size - idle, idle, waiting: pool._connectionQueue?.length ?? 0 };
    },
    async close() {
      guard?.close();
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

/** SQLite's datetime text as TypeORM writes it: `YYYY-MM-DD HH:MM:SS.SSS`, UTC. */
const sqliteDate = (d: Date): string => d.toISOString().slice(0, 23).replace('T', ' ');

function bindFor(dialect: Dialect): (params: readonly SqlValue[]) => unknown[] {
  if (dialect !== 'sqlite') return (params) => params as unknown[];
  return (params) => params.map((p) => (p instanceof Date ? sqliteDate(p) : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

interface RunnerResult {
  readonly records: unknown[];
  readonly affected?: number;
  readonly raw: unknown;
}

function sqlOn(runner: QueryRunner, dialect: Dialect): Sql {
  return sqlVia(dialect, (statement, params) => runner.query(statement, params, true) as Promise<RunnerResult>);
}

/** Outside a transaction: one pooled connection per statement (MySQL), the one connection (SQLite). */
function sqlOnPool(dataSource: DataSource, dialect: Dialect): Sql {
  return sqlVia(dialect, async (statement, params) => {
    const runner = dataSource.createQueryRunner();
    try {
      return (await runner.query(statement, params, true)) as RunnerResult;
    } finally {
      await runner.release();
    }
  });
}

function sqlVia(dialect: Dialect, query: (statement: string, params: unknown[]) => Promise<RunnerResult>): Sql {
  const bind = bindFor(dialect);
  return {
    dialect,
    async rows<R>(statement: string, params: readonly SqlValue[] = []): Promise<R[]> {
      return (await query(statement, bind(params))).records as R[];
    },
    async run(statement: string, params: readonly SqlValue[] = []): Promise<SqlWrite> {
      const result = await query(statement, bind(params));
      const raw = result.raw as { insertId?: number | string } | number | bigint | undefined;
      const insertId = typeof raw === 'object' && raw !== null ? raw.insertId : raw;
      return { affected: result.affected ?? 0, insertId: Number(insertId ?? 0) };
    },
  };
}

/**
 * Every statement goes through a query runner, so this is where "the database cannot be
 * reached" becomes one typed error (StoreUnavailableError, SERVICE_UNAVAILABLE) for every
 * caller; other errors pass unchanged.
 */
function typeStoreErrors(dataSource: DataSource, observe: StatementObserver): void {
  const driver = dataSource.driver;
  const create = driver.createQueryRunner.bind(driver);
  // better-sqlite3 hands out the same runner every time: wrapping it again on each hand-out
  // would stack one more wrapper per statement until the stack overflows.
  const wrapped = new WeakSet<object>();
  driver.createQueryRunner = (mode) => {
    const runner = create(mode);
    if (wrapped.has(runner)) return runner;
    wrapped.add(runner);
    const connect = runner.connect.bind(runner);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    runner.connect = () =>
      connect().catch((e: unknown) => {
        throw typedStoreError(e);
      });
    // query's overloads cannot be restated generically; arguments and result pass through.
    (runner as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args) =>
      observe(String(args[0]), () =>
        query(...args).catch((e: unknown) => {
          throw typedStoreError(e);
        }),
      );
    return runner;
  };
}

/** mysql2 keeps its pool's counts in these (undocumented, stable since mysql2 1.x) arrays; read only for metrics. */
interface MysqlPoolInternals {
  readonly _allConnections?: { readonly length: number };
  readonly _freeConnections?: { readonly length: number };
  readonly _connectionQueue?: { readonly length: number };
}

/** TypeORM wants to know up front whether it talks to MariaDB; the server says so itself. */
async function probeMysqlDialect(url: string, connectTimeout: number): Promise<Dialect> {
  const conn = await createConnection({ uri: url, connectTimeout });
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

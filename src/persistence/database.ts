import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource, type EntityManager, type EntitySchema, type Logger as OrmLogger, type QueryRunner } from 'typeorm';
import type { Logger } from '../logger';
import { isDeadlock, typedStoreError } from './db-errors';
import type { Dialect } from './dialect';
import { runMigrationsOnce } from './migration-lock';
import { migrations } from './migrations';
import { guardFor, mysqlSocketPath, mysqlTransaction, probeMysqlDialect, ReadBatcher } from './mysql-sql';
import { MysqlStoreGuard } from './mysql-store-guard';
import { StaleReadError, type SqlResult, type SqlTransaction, type SqlValue, type Statement } from './sql';
import { SqliteWriter } from './sqlite-writer';
import { SqliteCheckpointer, type SqliteConnection } from './sqlite-checkpointer';
import { SqliteReader } from './sqlite-reader';

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

/** Connections of the MySQL pool right now; null on the embedded database (one writing connection, one reading). */
export interface PoolUse {
  readonly size: number;
  readonly inUse: number;
  readonly idle: number;
  /** Statements waiting for a connection. */
  readonly waiting: number;
}

/** Entity schemas by the name their feature reads them by; each feature brings its own. */
export type EntitySchemas = Readonly<Record<string, EntitySchema>>;

/**
 * The gateway's connection to its database (on SQLite, the one that writes and the reader
 * thread's). `E` is what a feature sees of the entity schemas: each store asks for its own
 * tables only (`Database<SessionEntities>`), and the composition root opens it with every
 * feature's (see gateway-database.ts).
 */
export interface Database<E extends EntitySchemas = EntitySchemas> {
  readonly dataSource: DataSource;
  readonly dialect: Dialect;
  readonly entities: E;
  /** Runs `work` in one transaction, serialised on SQLite and retried on MySQL deadlocks. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  /**
   * `transaction` for plain statements (see `Sql`), with the same guarantees: serialised on
   * SQLite, retried on MySQL deadlocks, rolled back when `work` throws. On MySQL the first
   * statement carries the START TRANSACTION and `commitWith` the COMMIT: a read-then-write
   * transaction is two round trips. Committed when `work` returns, if `commitWith` did not.
   */
  sqlTransaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T>;
  /**
   * One plain read outside any transaction (see `Sql` for binding and rows). On MySQL the
   * reads asked for together (side by side, as one request's Promise.all does) go to the
   * server as one multi-statement query on one pooled connection: one round trip and one
   * connection checkout instead of one each. Each is still its own autocommit statement.
   * On SQLite it runs on the reader thread (SqliteReader) and sees the last commit.
   */
  read<R>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
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
    // runMigrationsOnce runs them, under a lock on MySQL.
    migrationsRun: false,
    synchronize: false,
    logging: ['query', 'error'] as ('query' | 'error')[],
    logger: new OrmLog(options.logger, options.onQuery),
  };
  let dataSource: DataSource;
  // The embedded database's file and connection (prepareDatabase hands it over), for its checkpointer.
  const embedded: { file?: string; connection?: SqliteConnection } = {};
  if (options.databaseUrl) {
    dataSource = new DataSource({
      ...common,
      type: dialect === 'mariadb' ? 'mariadb' : 'mysql',
      url: options.databaseUrl,
      socketPath: mysqlSocketPath(options.databaseUrl) ?? undefined,
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
        // sqlTransaction sends a transaction's writes with its COMMIT in one round trip; all
        // SQL binds values through placeholders, never by pasting them into statement text.
        multipleStatements: true,
        // TypeORM sends text-protocol queries only, never prepared statements; mysql2's default
        // cache of 16,000 of them allocates four arrays of that length (~520 KB) per connection.
        maxPreparedStatements: 1,
      },
    });
  } else {
    mkdirSync(options.dataDir, { recursive: true });
    embedded.file = join(options.dataDir, 'gateway.sqlite');
    dataSource = new DataSource({
      ...common,
      type: 'better-sqlite3',
      database: embedded.file,
      // WAL with synchronous=NORMAL: a commit is one write to the WAL, fsynced at checkpoints
      // instead of at every commit (FULL's fsync per commit serialised every turn change behind
      // the disk). A crash of the gateway loses nothing; a power loss may lose the last commits,
      // never consistency (README, "Embedded database"). Checkpoints run on a worker thread
      // (SqliteCheckpointer), not inside this connection's commits.
      enableWAL: true,
      prepareDatabase: (db: SqliteConnection) => {
        db.pragma('synchronous = NORMAL');
        embedded.connection = db;
      },
    });
  }
  // Migrations run here, before the guard: a long ALTER must not hit the statement deadline.
  await dataSource.initialize();
  try {
    await runMigrationsOnce(dataSource, dialect);
  } catch (e) {
    await dataSource.destroy();
    throw e;
  }
  const checkpointer =
    embedded.file && embedded.connection ? new SqliteCheckpointer(embedded.file, embedded.connection, options.logger) : null;
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
  const observe: StatementObserver = options.observeStatement ?? ((_sql, run) => run());
  typeStoreErrors(dataSource, observe);
  // Plain reads: batched into one round trip on MySQL, on their own thread on SQLite.
  const reader = embedded.file ? new SqliteReader(embedded.file, options.logger) : null;
  const read: (sql: string, params: readonly SqlValue[]) => Promise<unknown[]> = reader
    ? (sql, params) => {
        options.onQuery?.(sql);
        return observe(sql, () => reader.read(sql, bindSqlite(params)));
      }
    : batchedReads(new ReadBatcher(dataSource));
  // One connection: a second BEGIN while one is open would nest as a savepoint, so one writer orders them (and groups commits).
  const writer = dialect === 'sqlite' ? sqliteWriter(dataSource) : null;
  const rowGuard = guardFor(dialect);
  const transaction = <T>(work: (em: EntityManager) => Promise<T>): Promise<T> =>
    writer ? writer.alone(work) : retryDeadlocks(() => dataSource.transaction(work));

  return {
    dataSource,
    dialect,
    entities,
    transaction,
    sqlTransaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
      if (writer) return writer.grouped(work);
      return retryDeadlocks(() => mysqlTransaction(dataSource.createQueryRunner('master'), rowGuard, work));
    },
    async read<R>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
      return (await read(sql, params)) as R[];
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
      await writer?.settled();
      try {
        if (dataSource.isInitialized) await dataSource.destroy();
      } finally {
        // Joined here: nothing of the database is left running once close settles.
        await reader?.close();
        await checkpointer?.close();
      }
    },
  };
}

const batchedReads =
  (batcher: ReadBatcher) =>
  (sql: string, params: readonly SqlValue[]): Promise<unknown[]> =>
    batcher.read(sql, params);

/** SQLite's datetime text as TypeORM writes it: `YYYY-MM-DD HH:MM:SS.SSS`, UTC. */
const sqliteDate = (d: Date): string => d.toISOString().slice(0, 23).replace('T', ' ');

async function retryDeadlocks<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (n >= MAX_ATTEMPTS || !isDeadlock(e)) throw e;
      await new Promise((r) => setTimeout(r, 5 * n + Math.random() * 10));
    }
  }
}

const bindSqlite = (params: readonly SqlValue[]): unknown[] =>
  params.map((p) => (p instanceof Date ? sqliteDate(p) : typeof p === 'boolean' ? (p ? 1 : 0) : p));

/** What TypeORM's SQLite query runner hands back for a structured result. */
interface SqliteRunnerResult {
  readonly records: unknown[];
  readonly raw: unknown;
  /** Rows a statement that returns none changed. */
  readonly affected?: number;
}

function sqliteWriter(dataSource: DataSource): SqliteWriter<SqlTransaction> {
  // better-sqlite3 hands out the same runner (its one connection) every time.
  const runner = dataSource.createQueryRunner();
  return new SqliteWriter(runner, sqliteTransaction(runner), (work) => dataSource.transaction(work));
}

/** Inside the transaction the writer opened (it begins, commits and rolls back). */
function sqliteTransaction(runner: QueryRunner): SqlTransaction {
  const exec = async (statement: Statement): Promise<SqlResult> => {
    const result = (await runner.query(statement.sql, bindSqlite(statement.params), true)) as SqliteRunnerResult;
    if (statement.mustChangeOneRow && result.affected !== 1) throw new StaleReadError();
    return { rows: result.records, insertId: Number(result.raw ?? 0) };
  };
  return {
    async rows<R>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
      return (await exec({ sql, params })).rows as R[];
    },
    async commitWith(statements: readonly Statement[]): Promise<SqlResult[]> {
      const results: SqlResult[] = [];
      for (const statement of statements) results.push(await exec(statement));
      return results;
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

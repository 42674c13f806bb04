import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool, PoolConnection } from 'mysql2';
import {
  DataSource,
  EventSubscriber,
  type EntityManager,
  type EntitySchema,
  type EntitySubscriberInterface,
  type QueryRunner,
} from 'typeorm';
import type { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';
import type { AfterQueryEvent, BeforeQueryEvent } from 'typeorm/subscriber/event/QueryEvent';
import type { Logger } from '../logger';
import { isDatabaseUnavailable, isDeadlock, StoreUnavailableError, typedStoreError } from './db-errors';
import type { Dialect } from './dialect';
import { runMigrationsOnce } from './migration-lock';
import { migrations } from './migrations';
import { CLIENT_GRACE_MS, CLIENT_TIMEOUT_CODE, MysqlPoolGuard, sessionSetupSql } from './mysql-pool-guard';
import { guardFor, mysqlSocketPath, mysqlTransaction, probeMysqlServer, ReadBatcher } from './mysql-sql';
import { OrmLog } from './orm-log';
import type { SqlTransaction, SqlValue } from './sql';
import { bindSqlite, sqliteWriter } from './sqlite-writer';
import { SqliteCheckpointer, type SqliteConnection } from './sqlite-checkpointer';
import { SqliteReader } from './sqlite-reader';
import { limitPageCache, PAGE_CACHE_KIB } from './sqlite-page-cache';

export interface DatabaseOptions {
  /** mysql://user:pass@host:port/db; absent means the embedded SQLite file under dataDir. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly poolSize: number;
  /** MySQL: longest wait for a connection (and for the reachability probe). */
  readonly connectTimeoutMs?: number;
  /**
   * MySQL: longest one statement may run. The server ends it then (max_statement_time on
   * MariaDB, max_execution_time, SELECTs only, on MySQL); a connection whose server did not
   * answer shortly after is discarded.
   */
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
  /**
   * TypeORM's data source: the driver's escaping, and tests. The gateway's statements go
   * through the methods below, which fail fast while the store is down and type its errors.
   */
  readonly dataSource: DataSource;
  readonly dialect: Dialect;
  readonly entities: E;
  /**
   * ORM work outside a transaction (finds, query builders, single writes, `em.query`) on one
   * connection: its statements run one after the other, each in autocommit.
   */
  run<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
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
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const server = options.databaseUrl ? await probeMysqlServer(options.databaseUrl, connectTimeoutMs) : null;
  const dialect = server?.dialect ?? 'sqlite';
  const entities = entitiesFor(dialect);
  const common = {
    entities: Object.values(entities),
    migrations,
    // runMigrationsOnce runs them (on MySQL on a data source of their own, below).
    migrationsRun: false,
    synchronize: false,
    logging: ['query', 'error'] as ('query' | 'error')[],
    logger: new OrmLog(options.logger, options.onQuery),
  };
  let dataSource: DataSource;
  let guard: MysqlPoolGuard | null = null;
  // The embedded database's file and connection (prepareDatabase hands it over), for its checkpointer.
  const embedded: { file?: string; connection?: SqliteConnection } = {};
  if (options.databaseUrl) {
    const mysql = {
      ...common,
      type: dialect === 'mariadb' ? ('mariadb' as const) : ('mysql' as const),
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
    };
    // Migrations first, on a data source of their own without deadlines: a long ALTER on a
    // populated database must not hit the limit the gateway's statements run under. Two
    // connections: one holds the migration lock while the other runs them.
    const migrator = new DataSource({ ...mysql, extra: { ...mysql.extra, connectionLimit: 2 } });
    await migrator.initialize();
    try {
      await runMigrationsOnce(migrator, dialect);
    } finally {
      await migrator.destroy();
    }
    if (server?.statementBinlog) {
      options.logger.warn(
        'the server writes a statement-based binary log (binlog_format=STATEMENT): transactions stay at REPEATABLE READ, and turns of neighbouring sessions may wait on each other; ROW or MIXED lifts this',
      );
    }
    guard = new MysqlPoolGuard({
      url: options.databaseUrl,
      poolSize: options.poolSize,
      connectTimeoutMs,
      queryTimeoutMs,
      limitSql: sessionSetupSql(dialect === 'mariadb' ? 'mariadb' : 'mysql', queryTimeoutMs, server?.statementBinlog !== true),
      logger: options.logger,
    });
    dataSource = new DataSource({
      ...mysql,
      // mysql2's per-query timeout: a statement the server does not answer (it ends slow ones
      // itself, at the limit) fails a little later, and StatementWatch discards its connection.
      enableQueryTimeout: true,
      maxQueryExecutionTime: queryTimeoutMs + CLIENT_GRACE_MS,
      subscribers: [StatementWatch],
      // The guard opens the sockets (see MysqlPoolGuard.stream).
      extra: { ...mysql.extra, stream: guard.stream },
    });
  } else {
    mkdirSync(options.dataDir, { recursive: true });
    embedded.file = join(options.dataDir, 'gateway.sqlite');
    dataSource = new DataSource({
      ...common,
      type: 'better-sqlite3',
      database: embedded.file,
      subscribers: [StatementWatch],
      // WAL with synchronous=NORMAL: a commit is one write to the WAL, fsynced at checkpoints
      // instead of at every commit (FULL's fsync per commit serialised every turn change behind
      // the disk). A crash of the gateway loses nothing; a power loss may lose the last commits,
      // never consistency (README, "Embedded database"). Checkpoints run on a worker thread
      // (SqliteCheckpointer), not inside this connection's commits.
      enableWAL: true,
      prepareDatabase: (db: SqliteConnection) => {
        db.pragma('synchronous = NORMAL');
        limitPageCache(db, PAGE_CACHE_KIB.writer);
        embedded.connection = db;
      },
    });
  }
  const observe: StatementObserver = options.observeStatement ?? ((_sql, run) => run());
  watched.set(dataSource, { observe, guard });
  await dataSource.initialize();
  if (!guard) {
    try {
      await runMigrationsOnce(dataSource, dialect);
    } catch (e) {
      await dataSource.destroy();
      throw e;
    }
  }
  const checkpointer =
    embedded.file && embedded.connection ? new SqliteCheckpointer(embedded.file, embedded.connection, options.logger) : null;
  // TypeORM's MySQL driver keeps mysql2's pool as its public `pool`; only its documented events are used.
  guard?.attach((dataSource.driver as MysqlDriver).pool as Pool);
  const guarded = guard ? inTurn(guard) : typed;
  // Plain reads: batched into one round trip on MySQL, on their own thread on SQLite.
  const reader = embedded.file ? new SqliteReader(embedded.file, options.logger) : null;
  const read: (sql: string, params: readonly SqlValue[]) => Promise<unknown[]> = reader
    ? (sql, params) => {
        options.onQuery?.(sql);
        return observe(sql, () => reader.read(sql, bindSqlite(params)));
      }
    : batchedReads(new ReadBatcher((sql, params) => guarded(() => dataSource.query(sql, params))));
  // One connection: a second BEGIN while one is open would nest as a savepoint, so one writer orders them (and groups commits).
  const writer = dialect === 'sqlite' ? sqliteWriter(dataSource) : null;
  const rowGuard = guardFor(dialect);

  return {
    dataSource,
    dialect,
    entities,
    run<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
      // better-sqlite3 has one connection, which every manager shares.
      if (!guard) return typed(() => work(dataSource.manager));
      return guarded(async () => {
        const runner = dataSource.createQueryRunner('master');
        try {
          return await work(runner.manager);
        } finally {
          await runner.release();
        }
      });
    },
    transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
      if (writer) return typed(() => writer.alone(work));
      return guarded(() => retryDeadlocks(() => dataSource.transaction(work)));
    },
    sqlTransaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
      if (writer) return typed(() => writer.grouped(work));
      return guarded(() => retryDeadlocks(() => mysqlTransaction(dataSource.createQueryRunner('master'), rowGuard, work)));
    },
    async read<R>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
      return (await read(sql, params)) as R[];
    },
    async ping() {
      if (guard) await guard.ping();
      else await typed(() => dataSource.query('SELECT 1'));
    },
    poolUse() {
      return guard ? { size: options.poolSize, ...guard.use() } : null;
    },
    async close() {
      guard?.close();
      await writer?.settled();
      try {
        if (dataSource.isInitialized) await (guard ? endPool(dataSource, guard, options.logger) : dataSource.destroy());
      } finally {
        // Joined here: nothing of the database is left running once close settles.
        await reader?.close();
        await checkpointer?.close();
      }
    },
  };
}

/** Errors of an unreachable store typed as StoreUnavailableError (db-errors.ts), in one place. */
async function typed<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw typedStoreError(e);
  }
}

/**
 * `typed`, inside a turn at the MySQL pool: fails at once while the store is down, and an
 * unreachable store makes the guard probe it.
 */
const inTurn =
  (guard: MysqlPoolGuard) =>
  async <T>(op: () => Promise<T>): Promise<T> => {
    const leave = await guard.enter();
    try {
      return await op();
    } catch (e) {
      const error = typedStoreError(e);
      if (error instanceof StoreUnavailableError) guard.suspect();
      throw error;
    } finally {
      leave();
    }
  };

/** Longest close waits for the pool's goodbyes before it destroys what is still open. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Ends the pool (TypeORM's destroy: mysql2 sends each connection's Quit after what it runs
 * now). Bounded: a connection still waiting on a server that no longer answers would hold
 * that up forever, so after CLOSE_GRACE_MS every socket still open is destroyed, and so are
 * those the goodbyes left half-closed.
 */
async function endPool(dataSource: DataSource, guard: MysqlPoolGuard, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = dataSource.destroy().then(
    () => true,
    (err: unknown) => {
      logger.debug({ err }, 'the database pool ended with an error');
      return true;
    },
  );
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS);
  });
  const inTime = await Promise.race([ended, late]);
  clearTimeout(timer);
  if (!inTime) logger.warn({ graceMs: CLOSE_GRACE_MS }, 'database connections did not close in time; their sockets are destroyed');
  guard.destroySockets();
}

/** What StatementWatch does for one data source. */
interface Watched {
  readonly observe: StatementObserver;
  readonly guard: MysqlPoolGuard | null;
}
const watched = new WeakMap<DataSource, Watched>();
/** Statements of each runner under observation, oldest first: a connection answers in order. */
const observing = new WeakMap<QueryRunner, ((error?: Error) => void)[]>();

/**
 * TypeORM's documented query events, for every statement of a data source openDatabase made:
 * each is observed (metrics, traces: the observer's `run` settles when the statement does),
 * and on MySQL a connection whose statement missed the client's deadline is discarded: mysql2
 * leaves that statement in place and would queue the connection's next statements behind it,
 * and the pool's end would wait for it.
 */
@EventSubscriber()
class StatementWatch implements EntitySubscriberInterface {
  beforeQuery(event: BeforeQueryEvent): void {
    const hooks = watched.get(event.dataSource);
    if (!hooks) return;
    let settle: (error?: Error) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // The observer's failure outcome; the statement's caller gets the error itself.
    done.catch(() => undefined);
    void hooks.observe(event.query, () => done).catch(() => undefined);
    const queue = observing.get(event.queryRunner);
    if (queue) queue.push(settle);
    else observing.set(event.queryRunner, [settle]);
  }

  /**
   * Returns nothing for a statement that succeeded: TypeORM awaits what subscribers return,
   * and every statement passes here. An error is made only for a failure (a stack trace each
   * was a visible share of a burst's main thread).
   */
  afterQuery(event: AfterQueryEvent): Promise<void> | void {
    const settle = observing.get(event.queryRunner)?.shift();
    if (event.success) {
      settle?.();
      return;
    }
    settle?.(event.error instanceof Error ? event.error : new Error('statement failed'));
    const guard = watched.get(event.dataSource)?.guard;
    if (guard) return discardAfterFailure(guard, event);
  }
}

/** On MySQL: a connection that looks lost makes the pool suspect, one whose statement missed the client's deadline is dropped. */
async function discardAfterFailure(guard: MysqlPoolGuard, event: AfterQueryEvent): Promise<void> {
  if (isDatabaseUnavailable(event.error)) guard.suspect();
  if ((event.error as { code?: unknown } | undefined)?.code !== CLIENT_TIMEOUT_CODE) return;
  // connect() is the runner's documented way to its connection: here the one it holds.
  guard.discard((await event.queryRunner.connect()) as PoolConnection);
  guard.discardIdle();
}

const batchedReads =
  (batcher: ReadBatcher) =>
  (sql: string, params: readonly SqlValue[]): Promise<unknown[]> =>
    batcher.read(sql, params);

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

import { connect as netConnect, type Socket } from 'node:net';
import { createConnection, type Pool, type PoolConnection, type QueryError } from 'mysql2';
import { EventSubscriber, type DataSource, type EntitySubscriberInterface } from 'typeorm';
import type { AfterQueryEvent } from 'typeorm/subscriber/event/QueryEvent';
import type { Dialect } from './dialect';

/**
 * How much longer than the server's own statement limit the client waits for an answer.
 * Normally the server ends a slow statement itself and says so (the connection stays usable);
 * the client's deadline is for a server that no longer answers at all (a partition).
 */
export const CLIENT_GRACE_MS = 1_000;

/**
 * The server-side limit every statement of a pooled connection runs under, so a statement the
 * gateway gave up on does not go on running on the server (issue 35: a search ran on 132 s
 * after the gateway's deadline). MariaDB's `max_statement_time` (seconds) covers every
 * statement; MySQL's `max_execution_time` (ms) only read-only SELECTs, the only kind that can
 * run long without holding locks the gateway's own writes would then wait on.
 */
export const statementLimitSql = (dialect: Exclude<Dialect, 'sqlite'>, ms: number): string =>
  dialect === 'mariadb' ? `SET SESSION max_statement_time = ${ms / 1000}` : `SET SESSION max_execution_time = ${Math.ceil(ms)}`;

/** mysql2's error for a statement that got no answer within its `timeout` (the client's deadline). */
const CLIENT_TIMEOUT_CODE = 'PROTOCOL_SEQUENCE_TIMEOUT';

/** TCP keep-alive: idle connections to a server that vanished are noticed by the kernel eventually. */
const KEEP_ALIVE_DELAY_MS = 10_000;

/**
 * The pool's use as the gateway counts it from the pool's documented events, and the
 * server-side statement limit each connection gets before its first statement.
 */
export class MysqlPoolWatch {
  /** Connections open now (mysql2's 'connection' event, until the connection ends). */
  private readonly open = new Set<PoolConnection>();
  /** Handed out and not yet returned to the free list. */
  private readonly busy = new Set<PoolConnection>();
  /** Statements waiting for a connection (see `waitFor`). */
  private waiters = 0;

  constructor(
    private readonly onLimitFailed: (error: QueryError) => void,
    /** The SET statement of the server-side limit (statementLimitSql). */
    readonly limitSql: string,
    private readonly limitTimeoutMs: number,
  ) {}

  /**
   * Listens to `pool` from now on: each connection it opens runs the limit first (mysql2 emits
   * 'connection' before the caller gets the connection, so the SET goes before that caller's
   * first statement). The one connection TypeORM opened at start-up, before this, the caller
   * limits with one statement of its own (database.ts).
   */
  attach(pool: Pool): void {
    pool.on('connection', (connection) => {
      this.track(connection);
      connection.query({ sql: this.limitSql, timeout: this.limitTimeoutMs }, (err) => {
        if (!err) return;
        this.onLimitFailed(err);
        // Unanswered, the statements queued behind it would wait without a deadline; refused, they run unlimited.
        if (err.code === CLIENT_TIMEOUT_CODE) this.discard(connection);
      });
    });
    pool.on('acquire', (connection) => {
      this.track(connection);
      this.busy.add(connection);
    });
    pool.on('release', (connection) => this.busy.delete(connection));
  }

  /** Counts `connecting` (a runner asking the pool for its connection) as waiting until it settles. */
  waitFor<T>(connecting: Promise<T>): Promise<T> {
    this.waiters++;
    return connecting.finally(() => this.waiters--);
  }

  /** Sockets of the pool's connections by their connection's config (mysql2 gives each connection a config of its own). */
  private readonly sockets = new WeakMap<object, Socket>();
  private readonly allSockets = new Set<Socket>();

  /**
   * mysql2's documented `stream` option: the sockets are opened as mysql2 would (TCP or Unix
   * socket, no delay, keep-alive), and kept, because mysql2's destroy() only half-closes one
   * (a FIN a partition never answers: the socket, and any statement queued on it, would stay).
   */
  readonly stream = (opts: { config: { socketPath?: string; port?: number; host?: string } }): Socket => {
    const { socketPath, port, host } = opts.config;
    const socket = socketPath ? netConnect(socketPath) : netConnect(port ?? 3306, host);
    socket.setNoDelay(true);
    if (!socketPath) socket.once('connect', () => socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS));
    this.sockets.set(opts.config, socket);
    this.allSockets.add(socket);
    socket.once('close', () => this.allSockets.delete(socket));
    return socket;
  };

  /** Closes `connection` for good: out of the pool, its socket destroyed, whatever was queued on it failed. */
  discard(connection: PoolConnection): void {
    this.forget(connection);
    connection.destroy();
    this.sockets.get(connection.config)?.destroy();
  }

  /** Destroys every socket still open (the pool's end waits for goodbyes a partition never delivers). */
  destroyAll(): void {
    for (const socket of this.allSockets) socket.destroy();
  }

  /** A connection closed by the gateway (mysql2 emits nothing for a close the peer never answers). */
  forget(connection: PoolConnection): void {
    this.open.delete(connection);
    this.busy.delete(connection);
  }

  /**
   * A statement got no answer: the connections idle now were opened before, and may be as dead
   * as its one without knowing it (a partition keeps sockets open). They are closed rather than
   * handed out to statements that would each wait out the deadline, or to a pool that ends by
   * waiting for their goodbyes. A live server only costs new connections.
   */
  discardIdle(): void {
    for (const connection of this.open) {
      if (!this.busy.has(connection)) this.discard(connection);
    }
  }

  use(size: number): { size: number; inUse: number; idle: number; waiting: number } {
    return { size, inUse: this.busy.size, idle: this.open.size - this.busy.size, waiting: this.waiters };
  }

  private track(connection: PoolConnection): void {
    if (this.open.has(connection)) return;
    this.open.add(connection);
    const forget = () => this.forget(connection);
    connection.once('end', forget);
    // Kept (not once): mysql2 may emit a second error as the socket closes, and an unheard one would crash the process.
    connection.on('error', forget);
  }
}

/** The pool watch of each MySQL data source, for the subscriber below (TypeORM constructs it). */
const watches = new WeakMap<DataSource, MysqlPoolWatch>();

/** Registers `watch` as the pool watch of `dataSource` (before it runs statements). */
export const watchPoolOf = (dataSource: DataSource, watch: MysqlPoolWatch): void => void watches.set(dataSource, watch);

/**
 * A TypeORM subscriber (its documented afterQuery hook) that closes a connection whose
 * statement missed the client's deadline: mysql2 leaves that statement in place and would
 * queue every later statement of the connection behind it, without a deadline of its own
 * (it starts when a statement is sent). Destroyed before the runner hands it back, so the
 * pool never hands it out again.
 */
@EventSubscriber()
export class DiscardTimedOutConnections implements EntitySubscriberInterface {
  async afterQuery(event: AfterQueryEvent): Promise<void> {
    if (event.success || (event.error as { code?: unknown } | undefined)?.code !== CLIENT_TIMEOUT_CODE) return;
    // connect() is the runner's documented way to its connection: the one it already holds.
    const connection = (await event.queryRunner.connect()) as PoolConnection;
    const watch = watches.get(event.dataSource);
    if (!watch) return connection.destroy();
    watch.discard(connection);
    watch.discardIdle();
  }
}

/**
 * Whether the server answers: a fresh connection and SELECT 1 within `timeoutMs`. A server
 * that answers with an error (too many connections, access denied) is reachable.
 */
export function probeMysql(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const connection = createConnection({ uri: url, connectTimeout: timeoutMs });
    let answered = false;
    const answer = (reachable: boolean) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      connection.destroy();
      resolve(reachable);
    };
    const timer = setTimeout(() => answer(false), timeoutMs);
    const verdict = (err: QueryError | null) => answer(!err || typeof err.sqlState === 'string');
    connection.on('error', verdict);
    connection.query({ sql: 'SELECT 1', timeout: timeoutMs }, verdict);
  });
}

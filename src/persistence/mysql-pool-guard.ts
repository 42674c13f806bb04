import { connect as netConnect, type Socket } from 'node:net';
import { createConnection, type Pool, type PoolConnection, type QueryError } from 'mysql2';
import type { Logger } from '../logger';
import type { Dialect } from './dialect';
import { StoreUnavailableError } from './db-errors';

export interface MysqlPoolGuardOptions {
  readonly url: string;
  readonly poolSize: number;
  /** Longest wait for a new connection, and for the reachability probe. */
  readonly connectTimeoutMs: number;
  /** Longest one statement may run (the server-side limit; the client waits CLIENT_GRACE_MS more). */
  readonly queryTimeoutMs: number;
  /** The statement that sets up a new connection: its server-side limit and isolation (sessionSetupSql). */
  readonly limitSql: string;
  readonly logger: Logger;
}

/**
 * How much longer than the server's own limit the client waits for a statement's answer.
 * Normally the server ends a slow statement itself and says so (the connection stays usable);
 * the client's deadline is for a server that no longer answers at all (a partition).
 */
export const CLIENT_GRACE_MS = 500;

/**
 * What every pooled connection is set to when it opens.
 *
 * The server-side limit every statement runs under, so a statement the gateway gave up on
 * does not go on running on the server. MariaDB's `max_statement_time` (seconds, fractions
 * allowed) covers every statement; MySQL's `max_execution_time` (ms) only read-only SELECTs,
 * the only kind that runs long without holding locks.
 *
 * READ COMMITTED unless the server writes a statement-based binary log (which InnoDB allows
 * only at REPEATABLE READ): updates and locking reads then lock the rows they find, not the
 * gaps next to them, so a turn of one session does not wait on turns and joins of the
 * sessions beside it in an index (the participant rows' copies, ParticipantLists1765400000000).
 * Every invariant the gateway keeps rests on row locks and unique keys, none on gap locks.
 */
export const sessionSetupSql = (dialect: Exclude<Dialect, 'sqlite'>, ms: number, readCommitted: boolean): string => {
  const limit = dialect === 'mariadb' ? `SESSION max_statement_time = ${ms / 1000}` : `SESSION max_execution_time = ${Math.ceil(ms)}`;
  const isolation = dialect === 'mariadb' ? "SESSION tx_isolation = 'READ-COMMITTED'" : "SESSION transaction_isolation = 'READ-COMMITTED'";
  return `SET ${limit}${readCommitted ? `, ${isolation}` : ''}`;
};

/** mysql2's error for a statement that got no answer within its `timeout` (the client's deadline). */
export const CLIENT_TIMEOUT_CODE = 'PROTOCOL_SEQUENCE_TIMEOUT';

/** A statement slower than this makes the guard check that the server still answers. */
const STALL_MS = 1_000;
/** What mysql2 hands the `stream` factory: the new connection's own config. */
interface StreamRequest {
  readonly config: {
    readonly socketPath?: string;
    readonly port?: number;
    readonly host?: string;
    readonly enableKeepAlive?: boolean;
    readonly keepAliveInitialDelay?: number;
  };
}

/** An operation waiting for its turn at the pool. */
interface Waiter {
  admit(): void;
  fail(error: Error): void;
}

/** The pool's use, counted by the guard (database.ts PoolUse). */
export interface GuardedPoolUse {
  readonly inUse: number;
  readonly idle: number;
  readonly waiting: number;
}

/**
 * Keeps the MySQL pool from hanging when the server goes away, and notices when it is back;
 * through documented APIs only: mysql2's `stream` option (the guard opens the sockets, so it
 * can close them), the pool's events, and each connection's destroy().
 *
 * - Operations (each holds at most one pooled connection) pass `enter`: at most the pool's size
 *   at once, so mysql2 never queues; the others wait here, bounded: past the connect timeout
 *   only while the server still answers probes (a burst that keeps every connection busy is no
 *   outage), and never past the statement deadline.
 * - Each new connection runs the server-side statement limit before its first statement.
 * - A connection whose statement missed the client's deadline is discarded (`discard`).
 * - A failing or slow operation starts a probe on a fresh connection. If the probe fails, the
 *   store is down: every socket of the pool is destroyed (running statements fail at once, and
 *   no connection from before the outage is used again), waiting and new operations fail fast
 *   without touching the pool. Probes repeat until one succeeds.
 */
export class MysqlPoolGuard {
  /** Sockets by their connection's config: mysql2 gives each pooled connection a config of its own. */
  private readonly socketOf = new WeakMap<object, Socket>();
  private readonly sockets = new Set<Socket>();
  private readonly connections = new Set<PoolConnection>();
  private readonly busy = new Set<PoolConnection>();
  private readonly waiting: Waiter[] = [];
  private admitted = 0;
  private down = false;
  private probing: Promise<boolean> | null = null;
  private lastProbe = 0;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: MysqlPoolGuardOptions) {}

  /**
   * mysql2's documented `stream` option: sockets opened as mysql2 opens them (TCP or Unix socket,
   * no delay, keep-alive as configured) and kept, because a connection's destroy() only half-closes its
   * socket: a FIN a partition never answers leaves it open, with whatever was queued on it.
   */
  readonly stream = (request: StreamRequest): Socket => {
    const { socketPath, port, host, enableKeepAlive, keepAliveInitialDelay } = request.config;
    const socket = socketPath ? netConnect(socketPath) : netConnect(port ?? 3306, host);
    if (!socketPath) {
      socket.setNoDelay(true);
      if (enableKeepAlive) socket.once('connect', () => socket.setKeepAlive(true, keepAliveInitialDelay));
    }
    this.socketOf.set(request.config, socket);
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  };

  /**
   * Listens to the pool's documented events. mysql2 emits 'connection' and 'acquire' before the
   * caller gets the connection, so the limit statement queued there runs before the caller's
   * first one. The connection TypeORM opened at start-up, before this, is adopted when next
   * acquired.
   */
  attach(pool: Pool): void {
    pool.on('connection', (connection) => this.adopt(connection));
    pool.on('acquire', (connection) => {
      this.adopt(connection);
      this.busy.add(connection);
    });
    pool.on('release', (connection) => this.busy.delete(connection));
  }

  /**
   * Waits for a turn at the pool; the returned function ends it. Fails fast while the store is
   * down. A turn longer than a second makes the guard probe the server.
   */
  async enter(): Promise<() => void> {
    if (this.down || this.closed) throw new StoreUnavailableError(this.closed ? 'the database is closed' : 'the database is unreachable');
    if (this.admitted >= this.options.poolSize) await this.queue();
    else this.admitted++;
    const stall = setTimeout(() => this.suspect(), STALL_MS);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      clearTimeout(stall);
      const next = this.waiting.shift();
      // The turn passes on to the longest waiting, or back to the pool's count.
      if (next) next.admit();
      else this.admitted--;
    };
  }

  /** Something looked wrong (a statement failed to reach the server): probe, unless one runs or just succeeded. */
  suspect(): void {
    if (this.down || this.probing || this.closed) return;
    if (Date.now() - this.lastProbe < this.probeIntervalMs) return;
    void this.check();
  }

  /** Closes `connection` for good: out of the pool at once, its socket destroyed. */
  discard(connection: PoolConnection): void {
    this.forget(connection);
    connection.destroy();
    this.socketOf.get(connection.config)?.destroy();
  }

  /**
   * A statement got no answer: the connections idle now were opened before it, and may be as
   * dead as its one without knowing it (a partition, a firewall that forgot them, keeps sockets
   * open). They are closed rather than handed out to statements that would each wait out the
   * deadline; a live server only costs new connections.
   */
  discardIdle(): void {
    for (const connection of this.connections) if (!this.busy.has(connection)) this.discard(connection);
  }

  /** Readiness: fails at once while the store is known to be down, else within the connect timeout. */
  async ping(): Promise<void> {
    if (this.down || !(await this.check())) throw new StoreUnavailableError('the database does not answer');
  }

  use(): GuardedPoolUse {
    // Open sockets, not adopted connections: the one TypeORM opened at start-up counts before its first hand-out.
    return { inUse: this.busy.size, idle: Math.max(0, this.sockets.size - this.busy.size), waiting: this.waiting.length };
  }

  /** Stops probing and fails the operations still waiting; `destroySockets` then ends whatever the pool's end left open. */
  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    for (const waiter of this.waiting.splice(0)) waiter.fail(new StoreUnavailableError('the database is closed'));
  }

  /**
   * Destroys every socket still open: statements running on them fail with "connection lost",
   * and the pool's end stops waiting for goodbyes a partition never delivers.
   */
  destroySockets(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  private queue(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const started = Date.now();
      const settle = (error: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(error);
        } else resolve();
      };
      const waiter: Waiter = { admit: () => settle(null), fail: (error) => settle(error) };
      this.waiting.push(waiter);
      // A pool busy with a burst is no outage: past the connect timeout the wait goes on while
      // the server answers probes (an outage fails every waiter at once, markDown), up to the
      // statement deadline.
      const wait = () => {
        timer = setTimeout(() => {
          if (Date.now() - started >= this.options.queryTimeoutMs) {
            settle(new StoreUnavailableError(`no database connection within ${this.options.queryTimeoutMs} ms`));
            return;
          }
          void this.answersNow().then((reachable) => {
            if (settled) return;
            if (reachable) wait();
            else settle(new StoreUnavailableError('the database is unreachable'));
          });
        }, this.options.connectTimeoutMs);
      };
      wait();
    });
  }

  private adopt(connection: PoolConnection): void {
    if (this.connections.has(connection)) return;
    this.connections.add(connection);
    const forget = () => this.forget(connection);
    connection.once('end', forget);
    // Kept (not once): mysql2 may emit a second error as the socket closes, and one nobody hears would crash the process.
    connection.on('error', forget);
    this.socketOf.get(connection.config)?.once('close', forget);
    connection.query({ sql: this.options.limitSql, timeout: this.options.connectTimeoutMs }, (err: QueryError | null) => {
      if (!err) return;
      this.options.logger.error({ err, sql: this.options.limitSql }, 'the server-side statement limit could not be set');
      // Unanswered, the statements queued behind it would wait without a deadline.
      if (err.code === CLIENT_TIMEOUT_CODE) this.discard(connection);
    });
  }

  private forget(connection: PoolConnection): void {
    this.connections.delete(connection);
    this.busy.delete(connection);
  }

  /** Whether the server answers: known down, a probe running or just done, else a new probe. */
  private answersNow(): Promise<boolean> {
    if (this.down) return Promise.resolve(false);
    if (!this.probing && Date.now() - this.lastProbe < this.probeIntervalMs) return Promise.resolve(true);
    return this.check();
  }

  /** One probe at a time; its verdict moves the guard up or down. */
  private check(): Promise<boolean> {
    this.probing ??= probeMysql(this.options.url, this.options.connectTimeoutMs)
      .then((reachable) => {
        this.lastProbe = Date.now();
        if (reachable) this.markUp();
        else this.markDown();
        return reachable;
      })
      .finally(() => {
        this.probing = null;
      });
    return this.probing;
  }

  private markDown(): void {
    if (!this.down) {
      this.down = true;
      this.options.logger.error('database unreachable: requests fail fast until it answers again');
      this.destroySockets();
      for (const waiter of this.waiting.splice(0)) waiter.fail(new StoreUnavailableError('the database became unreachable'));
    }
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.check();
    }, this.probeIntervalMs);
    this.retry.unref();
  }

  private markUp(): void {
    if (!this.down) return;
    this.down = false;
    this.options.logger.info('database reachable again');
  }

  private get probeIntervalMs(): number {
    return Math.min(1_000, this.options.connectTimeoutMs);
  }
}

/**
 * Whether the server answers: a fresh connection and SELECT 1, all within `timeoutMs` of time
 * this process could run. A server that answers with an error (too many connections, access
 * denied) is reachable: failing every request fast would not help it.
 */
function probeMysql(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let socket: Socket | null = null;
    const connection = createConnection({
      uri: url,
      connectTimeout: timeoutMs,
      stream: ({ config }: StreamRequest) => {
        socket = config.socketPath ? netConnect(config.socketPath) : netConnect(config.port ?? 3306, config.host);
        return socket;
      },
    });
    let answered = false;
    const answer = (reachable: boolean) => {
      if (answered) return;
      answered = true;
      stop();
      connection.destroy();
      socket?.destroy();
      resolve(reachable);
    };
    const stop = afterRunnableTime(timeoutMs, () => answer(false));
    const verdict = (err: QueryError | null) => answer(!err || typeof err.sqlState === 'string');
    connection.on('error', verdict);
    connection.query('SELECT 1', verdict);
  });
}

const TICK_MS = 100;

/**
 * Calls `expire` once `ms` have passed in which this process could run: time the event loop
 * spent blocked (a burst of thousands of requests) does not count. Otherwise a probe's timer
 * and the server's answer, both due after a long block, race, the timer runs first, and a busy
 * gateway declares a healthy database down, failing every request at once.
 */
function afterRunnableTime(ms: number, expire: () => void): () => void {
  let used = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    used += Math.min(now - last, 2 * TICK_MS);
    last = now;
    if (used >= ms) expire();
    else timer = setTimeout(tick, TICK_MS);
  };
  let timer = setTimeout(tick, TICK_MS);
  return () => clearTimeout(timer);
}

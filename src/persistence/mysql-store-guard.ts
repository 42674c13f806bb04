import { createConnection, type Pool, type PoolConnection, type QueryError } from 'mysql2';
import type { Logger } from '../logger';
import { isDatabaseUnavailable, StoreUnavailableError } from './db-errors';

export interface MysqlStoreGuardOptions {
  readonly url: string;
  /** Longest wait for a pooled connection, and for the reachability probe. */
  readonly connectTimeoutMs: number;
  /** Longest one statement may run before its connection is discarded. */
  readonly queryTimeoutMs: number;
  readonly logger: Logger;
}

type Callback = (err: Error | null, connection?: PoolConnection) => void;
type QueryCallback = (err: QueryError | null, ...rest: unknown[]) => void;

/** A statement running now, so an outage can fail it at once. */
interface Running {
  readonly connection: PoolConnection;
  fail(error: Error): void;
}

/** A caller waiting for a pooled connection. */
interface Waiter {
  fail(error: Error): void;
}

/** A statement slower than this makes the guard check that the server still answers. */
const STALL_MS = 1_000;

/**
 * Keeps the MySQL pool from hanging when the server goes away, and notices when it is back.
 *
 * - Every statement has a deadline; a connection that missed one is destroyed, never reused
 *   (a partition that drops packets leaves sockets open, and mysql2 would queue the next
 *   statement behind the lost one).
 * - Waiting for a connection is bounded too: past the connect timeout only while the server
 *   still answers probes (a burst that keeps every connection busy is no outage), and never
 *   past the statement deadline; one that arrives late is handed back.
 * - A statement that fails to reach the server, or runs longer than a second, starts a probe
 *   on a fresh connection. If the probe fails, the store is down: running statements fail at
 *   once, new ones fail fast without touching the pool, and every connection opened before
 *   the outage is discarded when next handed out. Probes repeat until one succeeds.
 *
 * It patches the one pool TypeORM creates (getConnection, and query on the connections it
 * hands out): the only place every statement passes through. Those connections also keep
 * their promise wrapper instead of building one per statement.
 */
export class MysqlStoreGuard {
  private generation = 0;
  private readonly born = new WeakMap<PoolConnection, number>();
  private readonly guarded = new WeakSet<PoolConnection>();
  private readonly running = new Set<Running>();
  /** Callers waiting for a pooled connection, so an outage can fail them at once. */
  private readonly waiting = new Set<Waiter>();
  private down = false;
  private probing: Promise<boolean> | null = null;
  private lastProbe = 0;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: MysqlStoreGuardOptions) {}

  /** True while the last probe failed. */
  get isDown(): boolean {
    return this.down;
  }

  attach(pool: Pool): void {
    pool.on('connection', (connection) => this.born.set(connection, this.generation));
    const getConnection = pool.getConnection.bind(pool) as (cb: Callback) => void;
    (pool as unknown as { getConnection: (cb: Callback) => void }).getConnection = (cb) => this.acquire(getConnection, cb);
  }

  /** Readiness: fails at once while the store is known to be down, else within the connect timeout. */
  async ping(): Promise<void> {
    if (this.down || !(await this.check())) throw new StoreUnavailableError('the database does not answer');
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  private acquire(getConnection: (cb: Callback) => void, cb: Callback): void {
    if (this.down) {
      process.nextTick(() => cb(new StoreUnavailableError('the database is unreachable')));
      return;
    }
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const started = Date.now();
    const waiter: Waiter = {
      fail: (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiting.delete(waiter);
        cb(error);
      },
    };
    this.waiting.add(waiter);
    // A pool busy with a burst of requests is not an outage: past the connect timeout the wait
    // goes on while the server answers probes (an outage fails every waiter at once, markDown),
    // up to the statement deadline.
    const wait = () => {
      timer = setTimeout(() => {
        if (Date.now() - started >= this.options.queryTimeoutMs) {
          waiter.fail(new StoreUnavailableError(`no database connection within ${this.options.queryTimeoutMs} ms`));
          return;
        }
        void this.answersNow().then((reachable) => {
          if (settled) return;
          if (reachable) wait();
          else waiter.fail(new StoreUnavailableError('the database is unreachable'));
        });
      }, this.options.connectTimeoutMs);
    };
    wait();
    const attempt = () =>
      getConnection((err, connection) => {
        if (settled) {
          connection?.release();
          return;
        }
        if (err || !connection) {
          if (isDatabaseUnavailable(err)) this.suspect();
          waiter.fail(err ?? new StoreUnavailableError('no database connection'));
          return;
        }
        if ((this.born.get(connection) ?? 0) < this.generation) {
          // Opened before the last outage: its socket may be dead without knowing it.
          discard(connection);
          attempt();
          return;
        }
        settled = true;
        clearTimeout(timer);
        this.waiting.delete(waiter);
        this.guardQueries(connection);
        cb(null, connection);
      });
    attempt();
  }

  /** Whether the server answers: known down, a probe running or just done, else a new probe. */
  private answersNow(): Promise<boolean> {
    if (this.down) return Promise.resolve(false);
    if (!this.probing && Date.now() - this.lastProbe < this.probeIntervalMs) return Promise.resolve(true);
    return this.check();
  }

  /** Gives every statement on `connection` a deadline, and it one promise wrapper (once per connection). */
  private guardQueries(connection: PoolConnection): void {
    if (this.guarded.has(connection)) return;
    this.guarded.add(connection);
    const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
    // mysql2's overloads cannot be restated generically; the callback is the last argument.
    (connection as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback !== 'function') return query(...args);
      let done = false;
      const finish: QueryCallback = (err, ...rest) => {
        if (done) return;
        done = true;
        clearTimeout(stall);
        clearTimeout(deadline);
        this.running.delete(entry);
        if (err && isDatabaseUnavailable(err)) this.suspect();
        (callback as QueryCallback)(err, ...rest);
      };
      const entry: Running = {
        connection,
        fail: (error) => {
          discard(connection);
          finish(error as QueryError);
        },
      };
      const stall = setTimeout(() => this.suspect(), Math.min(STALL_MS, this.options.queryTimeoutMs));
      const deadline = setTimeout(() => {
        entry.fail(new StoreUnavailableError(`the database did not answer within ${this.options.queryTimeoutMs} ms`));
        this.suspect();
      }, this.options.queryTimeoutMs);
      this.running.add(entry);
      args[last] = finish;
      return query(...args);
    };
    // TypeORM asks for the promise wrapper on every statement, and mysql2 builds it anew each
    // time (a require() and an EventEmitter, ~20 µs); it holds nothing but the connection.
    const promise = connection.promise.bind(connection);
    let wrapper: ReturnType<typeof promise> | undefined;
    connection.promise = (promiseImpl) => (promiseImpl ? promise(promiseImpl) : (wrapper ??= promise()));
  }

  /** Something looked wrong: probe, unless a probe runs or one just succeeded. */
  private suspect(): void {
    if (this.down || this.probing || this.closed) return;
    if (Date.now() - this.lastProbe < this.probeIntervalMs) return;
    void this.check();
  }

  /** One probe at a time; its verdict moves the guard up or down. */
  private check(): Promise<boolean> {
    this.probing ??= this.probe()
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
      this.generation++;
      this.options.logger.error('database unreachable: requests fail fast until it answers again');
      for (const entry of [...this.running]) entry.fail(new StoreUnavailableError('the database became unreachable'));
      for (const waiter of [...this.waiting]) waiter.fail(new StoreUnavailableError('the database became unreachable'));
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

  /**
   * Connects afresh and runs SELECT 1, all within the connect timeout. A server that answers
   * with an error (too many connections, access denied) is reachable: failing every request
   * fast would not help it.
   */
  private probe(): Promise<boolean> {
    return new Promise((resolve) => {
      const connection = createConnection({ uri: this.options.url, connectTimeout: this.options.connectTimeoutMs });
      let answered = false;
      const answer = (reachable: boolean) => {
        if (answered) return;
        answered = true;
        stop();
        connection.destroy();
        resolve(reachable);
      };
      const stop = afterRunnableTime(this.options.connectTimeoutMs, () => answer(false));
      const verdict = (err: QueryError | null) => answer(!err || typeof err.sqlState === 'string');
      connection.on('error', verdict);
      connection.query('SELECT 1', verdict);
    });
  }
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

/** Closes a connection for good: out of the pool, socket destroyed (a FIN alone may never be answered). */
function discard(connection: PoolConnection): void {
  connection.destroy();
  (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

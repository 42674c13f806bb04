import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';

/** The connection a store writes through: better-sqlite3's (TypeORM's prepareDatabase hands it over too). */
export interface SqliteConnection {
  readonly open: boolean;
  pragma(source: string): unknown;
}

/**
 * The WAL size past which the worker checkpoints, and the size the main connection cuts the
 * WAL file back to when it starts it over after a checkpoint (journal_size_limit): about the
 * 1000 pages of 4 KiB at which SQLite checkpoints by default, so the main connection starts
 * the WAL over (one fsync of its header, on the thread that commits) no more often than before.
 */
const WAL_LIMIT_BYTES = 4 * 1024 * 1024;
/** How often the worker looks at each WAL's size: one stat call; a WAL overshoots the limit by what a burst writes in this time. */
const POLL_MS = 200;
/** The main connection's own checkpoint threshold while the worker runs: a safety net, reached only if the worker falls far behind. */
const SAFETY_NET_PAGES = 10_000;
/** SQLite's default threshold, back on the main connection if the worker cannot checkpoint its database. */
const DEFAULT_PAGES = 1000;

/** What the main thread tells the worker. */
type ToWorker = { readonly open: number; readonly file: string } | { readonly close: number } | { readonly stop: true };
/** What the worker answers: a connection closed, or a database it failed on (`fatal`: it could not open it). */
type FromWorker = { readonly closed: number } | { readonly failed: number; readonly error: string; readonly fatal: boolean };

/**
 * The worker's script, plain JavaScript handed over as text: it runs the same from dist/ and
 * under ts-jest, which would hand a worker a .ts file plain node cannot run. It never opens
 * a -wal or -shm file itself (closing such a descriptor would drop SQLite's POSIX locks on
 * it); it looks at each WAL's size and checkpoints through its own connection. A WAL whose
 * frames were all copied is left alone until it changes (its mtime).
 */
const WORKER_SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const { limitBytes, pollMs } = workerData;
const databases = new Map();
const failure = (e) => (e instanceof Error ? e.stack || e.message : String(e));
const timer = setInterval(() => {
  for (const [id, d] of databases) {
    try {
      const wal = statSync(d.file + '-wal', { throwIfNoEntry: false });
      if (!wal || wal.size <= limitBytes || wal.mtimeMs === d.settled) continue;
      const [result] = d.db.pragma('wal_checkpoint(PASSIVE)');
      d.settled = result.busy === 0 && result.checkpointed === result.log ? wal.mtimeMs : null;
    } catch (e) {
      parentPort.postMessage({ failed: id, error: failure(e), fatal: false });
    }
  }
}, pollMs);
parentPort.on('message', (m) => {
  if (m.open !== undefined) {
    try {
      databases.set(m.open, { file: m.file, db: new Database(m.file, { fileMustExist: true }), settled: null });
    } catch (e) {
      parentPort.postMessage({ failed: m.open, error: failure(e), fatal: true });
    }
  } else if (m.close !== undefined) {
    databases.get(m.close)?.db.close();
    databases.delete(m.close);
    parentPort.postMessage({ closed: m.close });
  } else {
    clearInterval(timer);
    parentPort.close();
  }
});
`;

/** A database the worker checkpoints, as the main thread knows it. */
interface Checkpointed {
  readonly file: string;
  readonly main: SqliteConnection;
  readonly logger: Logger;
}

/**
 * The one worker thread of the process (a thread costs about 10 MB), with a connection of its
 * own to each database it checkpoints; started with the first checkpointer, stopped and joined
 * with the last.
 */
class CheckpointThread {
  private readonly worker: Worker;
  private readonly databases = new Map<number, Checkpointed>();
  private readonly closing = new Map<number, () => void>();
  private readonly exited: Promise<void>;
  private running = true;
  private stopped = false;
  private error: unknown = null;

  constructor() {
    this.worker = new Worker(WORKER_SCRIPT, {
      eval: true,
      workerData: { driver: require.resolve('better-sqlite3'), limitBytes: WAL_LIMIT_BYTES, pollMs: POLL_MS },
    });
    this.worker.on('message', (m: FromWorker) => this.received(m));
    this.worker.on('error', (e) => {
      this.error = e;
    });
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.running = false;
        if (thread === this) thread = null;
        for (const done of this.closing.values()) done();
        if (!this.stopped) {
          for (const d of this.databases.values()) {
            fallBack(d, { err: this.error, code }, 'the sqlite wal checkpoint worker stopped; the main connection checkpoints again');
          }
        }
        resolve();
      }),
    );
  }

  add(id: number, database: Checkpointed): void {
    this.databases.set(id, database);
    this.send({ open: id, file: database.file });
  }

  /** Resolves once the worker closed its connection to the database; and exited, if it was the last. */
  async remove(id: number): Promise<void> {
    if (this.running) {
      await new Promise<void>((resolve) => {
        this.closing.set(id, resolve);
        this.send({ close: id });
      });
    }
    this.closing.delete(id);
    this.databases.delete(id);
    if (this.databases.size > 0) return;
    // A checkpointer started from now on starts a thread of its own.
    if (thread === this) thread = null;
    if (this.running && !this.stopped) {
      this.stopped = true;
      this.send({ stop: true });
    }
    await this.exited;
  }

  private send(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  private received(m: FromWorker): void {
    if ('closed' in m) {
      this.closing.get(m.closed)?.();
      return;
    }
    const d = this.databases.get(m.failed);
    if (!d) return;
    if (m.fatal) fallBack(d, { err: m.error }, 'the sqlite wal checkpoint worker cannot open the database; the main connection checkpoints again');
    else d.logger.error({ err: m.error, file: d.file }, 'sqlite wal checkpoint failed');
  }
}

/** The main connection checkpoints by itself again, at SQLite's default threshold. */
function fallBack(d: Checkpointed, details: object, message: string): void {
  if (d.main.open) d.main.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
  d.logger.error({ ...details, file: d.file }, message);
}

let thread: CheckpointThread | null = null;
let lastId = 0;

/**
 * Checkpoints an embedded SQLite database's write-ahead log on a worker thread, so the thread
 * that commits no longer does: an automatic checkpoint (copying the WAL into the database
 * file, with an fsync of each) ran inside the COMMIT that crossed the threshold, on the event
 * loop, doubling the average commit and sometimes taking 30 ms. The worker's checkpoints are
 * PASSIVE: they never wait for, nor block, the main connection. If the worker cannot
 * checkpoint the database, that is logged and the main connection checkpoints itself again.
 */
export class SqliteCheckpointer {
  private readonly id = ++lastId;
  private readonly thread: CheckpointThread;
  private closed: Promise<void> | null = null;

  /** Starts checkpointing `file`, the database `main` (in WAL mode) is connected to. */
  constructor(file: string, main: SqliteConnection, logger: Logger) {
    main.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    main.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    thread ??= new CheckpointThread();
    this.thread = thread;
    this.thread.add(this.id, { file, main, logger });
  }

  /**
   * Resolves once the worker's connection to the database is closed (the last connection to
   * close checkpoints and removes the WAL), and the worker has exited if nothing else uses it.
   */
  close(): Promise<void> {
    return (this.closed ??= this.thread.remove(this.id));
  }
}

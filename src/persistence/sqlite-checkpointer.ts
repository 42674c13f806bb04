import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import type { CheckpointerData, FromCheckpointer, ToCheckpointer } from './sqlite-checkpointer.worker';
import { workerFile } from './worker-file';

/** The connection a store writes through: better-sqlite3's (TypeORM's prepareDatabase hands it over too). */
export interface SqliteConnection {
  readonly open: boolean;
  pragma(source: string): unknown;
}

/**
 * WAL frames (pages) not yet copied past which the worker checkpoints: SQLite's own default
 * threshold, so at a light load, where the worker copies all of the WAL between commits and
 * the next commit starts it over (with one fsync of its header, on the thread that commits),
 * that happens no more often than before.
 */
const CHECKPOINT_FRAMES = 1000;
/** How often the worker looks at each WAL: a few small reads of its file. */
const POLL_MS = 100;
/**
 * The main connection's own checkpoint threshold while the worker runs. Under a steady stream
 * of commits the worker never copies the last frames (more land while it copies), and SQLite
 * starts a WAL over only once all of it was copied: the main connection's checkpoint at this
 * threshold, of what the worker has not copied yet (about 1,000 frames or one poll's worth), then
 * lets the WAL start over, every ~40 MB instead of every 4 MB. It also bounds a WAL the worker
 * falls behind on.
 */
const MAIN_THRESHOLD_PAGES = 10_000;
/**
 * journal_size_limit: a WAL file grown past this (the worker fell behind, a reader held a
 * checkpoint up) is cut back to it when it starts over. Below it the file is reused: writing
 * over a file costs less than growing it.
 */
const WAL_FILE_LIMIT_BYTES = 64 * 1024 * 1024;
/** SQLite's default threshold, back on the main connection if the worker cannot checkpoint its database. */
const DEFAULT_PAGES = 1000;

/** A database the worker checkpoints, as the main thread knows it. */
interface Checkpointed {
  readonly file: string;
  readonly main: SqliteConnection;
  readonly logger: Logger;
}

/**
 * The one worker thread of the process (a thread costs memory: docs/performance.md), with a connection of its
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
    this.worker = new Worker(workerFile('sqlite-checkpointer.worker'), {
      workerData: { checkpointFrames: CHECKPOINT_FRAMES, pollMs: POLL_MS } satisfies CheckpointerData,
    });
    this.worker.on('message', (m: FromCheckpointer) => this.received(m));
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

  private send(message: ToCheckpointer): void {
    this.worker.postMessage(message);
  }

  private received(m: FromCheckpointer): void {
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
 * loop, slowing the average commit and stalling some (docs/performance.md). The worker's checkpoints are
 * PASSIVE: they never wait for, nor block, the main connection. If the worker cannot
 * checkpoint the database, that is logged and the main connection checkpoints itself again.
 */
export class SqliteCheckpointer {
  private readonly id = ++lastId;
  private readonly thread: CheckpointThread;
  private closed: Promise<void> | null = null;

  /** Starts checkpointing `file`, the database `main` (in WAL mode) is connected to. */
  constructor(file: string, main: SqliteConnection, logger: Logger) {
    main.pragma(`journal_size_limit = ${WAL_FILE_LIMIT_BYTES}`);
    main.pragma(`wal_autocheckpoint = ${MAIN_THRESHOLD_PAGES}`);
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

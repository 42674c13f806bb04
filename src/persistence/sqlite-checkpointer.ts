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
/** How often the worker looks at the WAL's size: one stat call; the WAL overshoots the limit by what a burst writes in this time. */
const POLL_MS = 200;
/** The main connection's own checkpoint threshold while the worker runs: a safety net, reached only if the worker falls far behind. */
const SAFETY_NET_PAGES = 10_000;
/** SQLite's default threshold, back on the main connection if the worker dies. */
const DEFAULT_PAGES = 1000;

/**
 * The worker's script, plain JavaScript handed over as text: it runs the same from dist/ and
 * under ts-jest, which would hand a worker a .ts file plain node cannot run. It never opens
 * the -wal or -shm files itself (closing such a descriptor would drop SQLite's POSIX locks on
 * them); it looks at the WAL's size and checkpoints through its own connection. A WAL whose
 * frames were all copied is left alone until it changes (its mtime).
 */
const WORKER_SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const { file, limitBytes, pollMs } = workerData;
const db = new Database(file, { fileMustExist: true });
let settled = null;
const timer = setInterval(() => {
  try {
    const wal = statSync(file + '-wal', { throwIfNoEntry: false });
    if (!wal || wal.size <= limitBytes || wal.mtimeMs === settled) return;
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    settled = result.busy === 0 && result.checkpointed === result.log ? wal.mtimeMs : null;
  } catch (e) {
    parentPort.postMessage(e instanceof Error ? e.stack || e.message : String(e));
  }
}, pollMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints an embedded SQLite database's write-ahead log on a worker thread with its own
 * connection, so the thread that commits no longer does: an automatic checkpoint (copying
 * the WAL into the database file, with an fsync of each) ran inside the COMMIT that crossed
 * the threshold, on the event loop, doubling the average commit and sometimes taking 30 ms.
 * The worker's checkpoints are PASSIVE: they never wait for, nor block, the main connection.
 * If the worker dies, its error is logged and the main connection checkpoints itself again.
 */
export class SqliteCheckpointer {
  private closing = false;
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  /** Starts checkpointing `file`, the database `main` (in WAL mode) is connected to. */
  constructor(file: string, main: SqliteConnection, logger: Logger) {
    main.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    main.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    this.worker = new Worker(WORKER_SCRIPT, {
      eval: true,
      workerData: { driver: require.resolve('better-sqlite3'), file, limitBytes: WAL_LIMIT_BYTES, pollMs: POLL_MS },
    });
    this.worker.on('message', (stack: string) => logger.error({ err: stack, file }, 'sqlite wal checkpoint failed'));
    this.worker.on('error', (err) => logger.error({ err, file }, 'the sqlite wal checkpoint worker failed'));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        if (!this.closing && main.open) {
          main.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
          logger.error({ file, code }, 'the sqlite wal checkpoint worker stopped; the main connection checkpoints again');
        }
        resolve();
      }),
    );
  }

  /** Stops the worker and waits for it to exit, its connection closed (the last connection to close checkpoints and removes the WAL). */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.worker.postMessage('stop');
    }
    return this.exited;
  }
}

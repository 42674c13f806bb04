import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import type { SqliteConnection } from '../persistence/sqlite-checkpointer';
import { BlobStoreUnavailableError } from './blob-store.port';

/** What the main thread asks: a batch of objects written in one transaction, a pragma for the writing connection, or to stop. */
type ToWorker =
  | { readonly id: number; readonly objects: readonly (readonly [string, Uint8Array])[] }
  | { readonly pragma: string }
  | { readonly stop: true };
/** A batch written, or the error SQLite raised (nothing of that batch was kept). */
type FromWorker = { readonly done: number; readonly error?: string };

/**
 * The worker's script, plain JavaScript handed over as text (it runs the same from dist/ and
 * under ts-jest; see persistence/sqlite-checkpointer.ts). The main thread created the file,
 * its table and its WAL mode; this connection only writes.
 */
const WORKER_SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
for (const pragma of workerData.pragmas) db.pragma(pragma);
const upsert = db.prepare('INSERT INTO blobs (key, body) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body');
const writeAll = db.transaction((objects) => {
  for (const [key, body] of objects) upsert.run(key, Buffer.from(body.buffer, body.byteOffset, body.byteLength));
});
parentPort.on('message', (m) => {
  if (m.stop) {
    db.close();
    parentPort.close();
  } else if (m.pragma !== undefined) {
    db.pragma(m.pragma);
  } else {
    try {
      writeAll(m.objects);
      parentPort.postMessage({ done: m.id });
    } catch (e) {
      parentPort.postMessage({ done: m.id, error: e instanceof Error ? e.message : String(e) });
    }
  }
});
`;

interface Waiting {
  readonly worker: Worker;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/**
 * The embedded blob store's writes, on a worker thread with a connection of its own: the
 * B-tree inserts and WAL writes of a turn's four to seven objects were 7% of the gateway's
 * main-thread CPU under bench:execute (perf). A batch is one transaction. A thread that dies
 * fails the batches sent to it as BlobStoreUnavailableError; the next batch starts another,
 * which is given the pragmas set so far (the checkpointer's, through `connection`).
 */
export class SqliteBlobWriter {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  /** The writes not answered yet, for close to wait for. */
  private readonly unanswered = new Set<Promise<void>>();
  private readonly pragmas: string[] = [];
  private nextId = 0;
  private closed = false;

  /** The writing connection as the checkpointer sees it: pragmas go to the thread, in order with the writes. */
  readonly connection: SqliteConnection = {
    get open() {
      return true;
    },
    pragma: (source: string) => {
      this.pragmas.push(source);
      this.worker?.postMessage({ pragma: source } satisfies ToWorker);
    },
  };

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {
    this.worker = this.start();
  }

  /** Writes `objects` in one transaction; resolves once it committed. */
  write(objects: ReadonlyMap<string, Buffer>): Promise<void> {
    if (this.closed) return Promise.reject(new BlobStoreUnavailableError('the embedded blob store was closed at shutdown'));
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    const written = new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { worker, resolve, reject });
      // Only while writes wait: an idle store must not keep a CLI's process alive.
      worker.ref();
      worker.postMessage({ id, objects: [...objects] } satisfies ToWorker);
    });
    const answered = written.then(
      () => undefined,
      () => undefined,
    );
    this.unanswered.add(answered);
    void answered.then(() => this.unanswered.delete(answered));
    return written;
  }

  /** Finishes the batches sent, then closes the connection and joins the thread. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.unanswered);
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage({ stop: true } satisfies ToWorker);
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SCRIPT, {
      eval: true,
      workerData: { file: this.file, driver: require.resolve('better-sqlite3'), pragmas: this.pragmas },
    });
    worker.unref();
    worker.on('message', (m: FromWorker) => this.answered(worker, m));
    worker.on('error', (e) => this.lost(worker, e));
    worker.on('exit', (code) => this.lost(worker, new Error(`blob writer thread exited with code ${code}`)));
    return worker;
  }

  private answered(worker: Worker, m: FromWorker): void {
    const waiting = this.waiting.get(m.done);
    if (!waiting) return;
    this.waiting.delete(m.done);
    if (m.error === undefined) waiting.resolve();
    else waiting.reject(new Error(m.error));
    if (this.waiting.size === 0) worker.unref();
  }

  /** The thread is gone (it could not open the file, or crashed): its batches fail, the next write starts another. */
  private lost(worker: Worker, e: Error): void {
    if (this.worker === worker) this.worker = null;
    const failed = [...this.waiting].filter(([, waiting]) => waiting.worker === worker);
    if (failed.length === 0) return;
    this.logger.error({ err: e, file: this.file }, 'SQLite blob writer thread lost');
    for (const [id, waiting] of failed) {
      this.waiting.delete(id);
      waiting.reject(new BlobStoreUnavailableError(e.message, { cause: e }));
    }
  }
}

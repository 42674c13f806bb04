import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { StoreUnavailableError, typedStoreError } from './db-errors';

/** Prepared statements the worker keeps, least recently used dropped first (a list's text varies with its filters). */
const STATEMENT_CACHE = 256;

/** What the main thread asks: one read, or to stop once the reads before it are answered. */
type ToWorker = { readonly id: number; readonly sql: string; readonly params: readonly unknown[] } | { readonly stop: true };
/** What the worker answers for read `id`: its rows, or the error SQLite raised. */
type FromWorker =
  | { readonly id: number; readonly rows: unknown[] }
  | { readonly id: number; readonly error: string; readonly code: string | null };

/**
 * The worker's script, plain JavaScript handed over as text (it runs the same from dist/ and
 * under ts-jest; see sqlite-checkpointer.ts). Its connection is read-only: under WAL it reads
 * the last commit while the main connection writes, and a write sent to it fails.
 */
const WORKER_SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
const statements = new Map();

function statementOf(sql) {
  let statement = statements.get(sql);
  if (statement) {
    statements.delete(sql);
  } else {
    statement = db.prepare(sql);
    if (statements.size >= workerData.cacheSize) statements.delete(statements.keys().next().value);
  }
  statements.set(sql, statement);
  return statement;
}

parentPort.on('message', (m) => {
  if (m.stop) {
    db.close();
    parentPort.close();
    return;
  }
  try {
    parentPort.postMessage({ id: m.id, rows: statementOf(m.sql).all(...m.params) });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: e instanceof Error ? e.message : String(e), code: typeof e.code === 'string' ? e.code : null });
  }
});
`;

interface Pending {
  /** The thread the read went to: a thread lost fails its own reads, not those sent to the next one. */
  readonly worker: Worker;
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Plain reads of the embedded database on a worker thread with its own read-only connection.
 * better-sqlite3 runs a statement on the thread that calls it: on the main thread the list's
 * two statements took half of a request's CPU, and nothing else ran meanwhile. On the worker
 * they run beside the main thread's GraphQL work, on the machine's other core (bench:list:
 * 0.5x -> 0.8x of a hand-written endpoint that reads on its main thread). A read sees every
 * commit made before it was sent (the main connection commits synchronously) and never a
 * transaction still open on the main connection. Started with the first read; a worker that
 * dies fails its reads as StoreUnavailableError and the next read starts another.
 */
export class SqliteReader {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  read(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    const worker = (this.worker ??= this.start());
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { worker, resolve, reject });
      // Only while reads wait: an idle reader must not keep a CLI's process alive.
      worker.ref();
      worker.postMessage({ id, sql, params } satisfies ToWorker);
    });
  }

  /** Answers the reads already sent, then stops the thread and joins it. */
  async close(): Promise<void> {
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
      workerData: { file: this.file, driver: require.resolve('better-sqlite3'), cacheSize: STATEMENT_CACHE },
    });
    worker.unref();
    worker.on('message', (m: FromWorker) => this.answered(worker, m));
    worker.on('error', (e) => this.lost(worker, e));
    worker.on('exit', (code) => this.lost(worker, new Error(`reader thread exited with code ${code}`)));
    return worker;
  }

  private answered(worker: Worker, m: FromWorker): void {
    const waiting = this.pending.get(m.id);
    if (!waiting) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) worker.unref();
    if ('rows' in m) waiting.resolve(m.rows);
    else waiting.reject(typedStoreError(Object.assign(new Error(m.error), { code: m.code ?? undefined })));
  }

  /** The thread is gone (it could not open the file, or crashed): its reads fail, the next read starts another. */
  private lost(worker: Worker, e: Error): void {
    if (this.worker === worker) this.worker = null;
    const failed = [...this.pending].filter(([, waiting]) => waiting.worker === worker);
    if (failed.length === 0) return;
    this.logger.error({ err: e, file: this.file }, 'SQLite reader thread lost');
    for (const [id, waiting] of failed) {
      this.pending.delete(id);
      waiting.reject(new StoreUnavailableError(e.message, e));
    }
  }
}

import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { StoreUnavailableError, typedStoreError } from './db-errors';

/** Prepared statements the worker keeps, least recently used dropped first (a list's text varies with its filters). */
const STATEMENT_CACHE = 256;

interface Read {
  readonly id: number;
  readonly sql: string;
  readonly params: readonly unknown[];
}
/** What the main thread asks: the reads asked for together, or to stop once the reads before it are answered. */
type ToWorker = { readonly reads: readonly Read[] } | { readonly stop: true };
/** What the worker answers for read `id`: its rows, or the error SQLite raised. */
type Answer = { readonly id: number; readonly rows: unknown[] } | { readonly id: number; readonly error: string; readonly code: string | null };
/** The answers to one message's reads, in one message. */
type FromWorker = { readonly answers: readonly Answer[] };

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

function answer(read) {
  try {
    return { id: read.id, rows: statementOf(read.sql).all(...read.params) };
  } catch (e) {
    return { id: read.id, error: e instanceof Error ? e.message : String(e), code: typeof e.code === 'string' ? e.code : null };
  }
}

parentPort.on('message', (m) => {
  if (m.stop) {
    db.close();
    parentPort.close();
    return;
  }
  parentPort.postMessage({ answers: m.reads.map(answer) });
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
 * two statements took much of a request's CPU, and nothing else ran meanwhile. On the worker
 * they run beside the main thread's GraphQL work, on the machine's other core (bench:list;
 * docs/performance.md has the figures). A read sees every
 * commit made before it was sent (the main connection commits synchronously) and never a
 * transaction still open on the main connection. Reads asked for together (a list's page and
 * count, a burst of executes' reads) go over in one message and come back in one: each message
 * wakes the other thread. A worker that dies fails its reads as StoreUnavailableError and the
 * next read starts another.
 */
export class SqliteReader {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  /** Reads asked for since the last message, sent once the pending microtasks have run. */
  private queued: Read[] = [];
  private nextId = 0;
  private closed = false;

  /** Starts the thread now: it is part of an idle gateway, not of the first request. */
  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {
    this.worker = this.start();
  }

  read(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the database is closed'));
    const worker = (this.worker ??= this.start());
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { worker, resolve, reject });
      // Only while reads wait: an idle reader must not keep a CLI's process alive.
      worker.ref();
      if (this.queued.length === 0) process.nextTick(() => this.send());
      this.queued.push({ id, sql, params });
    });
  }

  /** Answers the reads already sent, then stops the thread and joins it. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    this.send(worker);
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

  /**
   * To the thread running now: if the one a read was asked of was lost meanwhile, that read has
   * already failed, and its answer from this one is ignored.
   */
  private send(worker = this.worker): void {
    const reads = this.queued;
    this.queued = [];
    if (reads.length > 0) worker?.postMessage({ reads } satisfies ToWorker);
  }

  private answered(worker: Worker, m: FromWorker): void {
    for (const answer of m.answers) {
      const waiting = this.pending.get(answer.id);
      if (!waiting) continue;
      this.pending.delete(answer.id);
      if ('rows' in answer) waiting.resolve(answer.rows);
      else waiting.reject(typedStoreError(Object.assign(new Error(answer.error), { code: answer.code ?? undefined })));
    }
    if (this.pending.size === 0) worker.unref();
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

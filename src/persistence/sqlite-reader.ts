import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { StoreUnavailableError, typedStoreError } from './db-errors';
import type { FromReader, Read, ReaderData, ToReader } from './sqlite-reader.worker';
import { workerFile } from './worker-file';

/** Prepared statements the worker keeps, least recently used dropped first (a list's text varies with its filters). */
const STATEMENT_CACHE = 256;
/**
 * The thread's young generation, in MB (two semi-spaces and a large-object part). Left at V8's
 * default its new space doubled in steps 1 → 16 MB over the soak's first minutes, for reads
 * whose rows die as soon as they are posted; capped it stays at 8 MB (docs/performance.md).
 */
const YOUNG_GENERATION_MB = 12;

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
    worker.postMessage({ stop: true } satisfies ToReader);
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(workerFile('sqlite-reader.worker'), {
      workerData: { file: this.file, cacheSize: STATEMENT_CACHE } satisfies ReaderData,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    worker.unref();
    worker.on('message', (m: FromReader) => this.answered(worker, m));
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
    if (reads.length > 0) worker?.postMessage({ reads } satisfies ToReader);
  }

  private answered(worker: Worker, m: FromReader): void {
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

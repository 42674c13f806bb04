import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger';
import { StoreUnavailableError, typedStoreError } from './db-errors';
import { StaleReadError, type SqlResult } from './sql';
import { STATEMENT_CACHE, STATEMENT_CACHE_SCRIPT } from './sqlite-reader';
import type { SqliteConnection } from './sqlite-checkpointer';

/** Transactions that share one COMMIT at most. */
const MAX_GROUP = 32;

/** A statement with its parameters already bound for SQLite (Dates as text, booleans as 0/1). */
export interface BoundStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
  /** Statement.mustChangeOneRow: unless it changes exactly one row, its transaction rolls back as stale. */
  readonly guard: boolean;
}

interface Transaction {
  readonly id: number;
  readonly statements: readonly BoundStatement[];
}
/** What the main thread asks: transactions to commit together, a pragma for the connection, or to stop once the rest is done. */
type ToWorker = { readonly group: readonly Transaction[] } | { readonly pragma: string } | { readonly stop: true };
/** How one transaction of a group went; `failed` with `stale` when a guard found its row changed. */
type Answer =
  | { readonly id: number; readonly results: SqlResult[] }
  | { readonly id: number; readonly failed: string; readonly code: string | null; readonly stale: boolean };
type FromWorker = { readonly answers: readonly Answer[] };

/**
 * The worker's script, plain JavaScript handed over as text (it runs the same from dist/ and
 * under ts-jest; see sqlite-checkpointer.ts). A group is one transaction: BEGIN, each of its
 * transactions in a savepoint of its own when there are several (one that fails rolls back
 * alone), COMMIT. If the COMMIT fails, every transaction of the group fails.
 */
const WORKER_SCRIPT = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
for (const pragma of workerData.pragmas) db.pragma(pragma);
${STATEMENT_CACHE_SCRIPT}
const bind = (params) => params.map((p) => (ArrayBuffer.isView(p) ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p));
class Stale extends Error {}
const failure = (id, e) => ({ id, failed: e instanceof Error ? e.message : String(e), code: typeof e.code === 'string' ? e.code : null, stale: e instanceof Stale });

function run(statements) {
  const results = [];
  for (const s of statements) {
    const statement = statementOf(s.sql);
    if (statement.reader) {
      if (s.guard) throw new Stale();
      results.push({ rows: statement.all(...bind(s.params)), insertId: 0 });
    } else {
      const info = statement.run(...bind(s.params));
      if (s.guard && info.changes !== 1) throw new Stale();
      results.push({ rows: [], insertId: Number(info.lastInsertRowid) });
    }
  }
  return results;
}

function commitGroup(group) {
  const several = group.length > 1;
  statementOf('BEGIN TRANSACTION').run();
  const answers = group.map((t) => {
    if (several) statementOf('SAVEPOINT member').run();
    try {
      const results = run(t.statements);
      if (several) statementOf('RELEASE member').run();
      return { id: t.id, results };
    } catch (e) {
      if (several) {
        statementOf('ROLLBACK TO member').run();
        statementOf('RELEASE member').run();
      }
      return failure(t.id, e);
    }
  });
  if (!several && answers[0].failed !== undefined) {
    statementOf('ROLLBACK').run();
    return answers;
  }
  try {
    statementOf('COMMIT').run();
    return answers;
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    return group.map((t) => failure(t.id, e));
  }
}

parentPort.on('message', (m) => {
  if (m.stop) {
    db.close();
    parentPort.close();
  } else if (m.pragma !== undefined) {
    db.pragma(m.pragma);
  } else {
    let answers;
    try {
      answers = commitGroup(m.group);
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      answers = m.group.map((t) => failure(t.id, e));
    }
    parentPort.postMessage({ answers });
  }
});
`;

interface Pending {
  /** The thread it was sent to; null until it is sent. */
  worker: Worker | null;
  readonly resolve: (results: SqlResult[]) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * The embedded database's plain-statement transactions, on a worker thread with a writing
 * connection of its own: on the main thread, better-sqlite3 ran their statements and WAL
 * writes on the event loop, 15% of its CPU under bench:execute (perf). A transaction is sent
 * whole (its statements are known before it starts: SqlTransaction.commitWith without reads
 * first); those asked for in the same event-loop turn go over in one message and share one
 * COMMIT (group commit), and each caller hears of its transaction only once that COMMIT is
 * done. `onStatement` hears every statement the thread runs for them, as it is sent. A thread
 * that dies fails what was sent to it as StoreUnavailableError; the next transaction starts another.
 */
export class SqliteWriteThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private queued: Transaction[] = [];
  private readonly pragmas: string[] = [];
  private idleWaiters: (() => void)[] = [];
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
    private readonly onStatement: (sql: string) => void = () => undefined,
  ) {
    this.worker = this.start();
  }

  /** Runs `statements` as one transaction, committed with the others asked for in this event-loop turn. */
  transact(statements: readonly BoundStatement[]): Promise<SqlResult[]> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the database is closed'));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { worker: null, resolve, reject });
      if (this.queued.length === 0) process.nextTick(() => this.send());
      this.queued.push({ id, statements });
    });
  }

  /** Resolves once nothing asked for so far is still to be answered. */
  idle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Answers what was asked for, then closes the connection and joins the thread. */
  async close(): Promise<void> {
    await this.idle();
    this.closed = true;
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
      workerData: { file: this.file, driver: require.resolve('better-sqlite3'), cacheSize: STATEMENT_CACHE, pragmas: this.pragmas },
    });
    worker.unref();
    worker.on('message', (m: FromWorker) => this.answered(worker, m));
    worker.on('error', (e) => this.lost(worker, e));
    worker.on('exit', (code) => this.lost(worker, new Error(`SQLite write thread exited with code ${code}`)));
    return worker;
  }

  private send(): void {
    const queued = this.queued;
    this.queued = [];
    const worker = (this.worker ??= this.start());
    // Only while transactions wait: an idle database must not keep a CLI's process alive.
    worker.ref();
    for (const t of queued) {
      const waiting = this.pending.get(t.id);
      if (waiting) waiting.worker = worker;
    }
    for (let at = 0; at < queued.length; at += MAX_GROUP) {
      const group = queued.slice(at, at + MAX_GROUP);
      this.describe(group);
      worker.postMessage({ group } satisfies ToWorker);
    }
  }

  /** What the thread will run for `group`, for the statement log (query counts). */
  private describe(group: readonly Transaction[]): void {
    const several = group.length > 1;
    this.onStatement('BEGIN TRANSACTION');
    for (const t of group) {
      if (several) this.onStatement('SAVEPOINT member');
      for (const s of t.statements) this.onStatement(s.sql);
      if (several) this.onStatement('RELEASE member');
    }
    this.onStatement('COMMIT');
  }

  private answered(worker: Worker, m: FromWorker): void {
    for (const answer of m.answers) {
      const waiting = this.pending.get(answer.id);
      if (!waiting) continue;
      this.pending.delete(answer.id);
      if ('results' in answer) waiting.resolve(answer.results);
      else if (answer.stale) waiting.reject(new StaleReadError());
      else waiting.reject(typedStoreError(Object.assign(new Error(answer.failed), { code: answer.code ?? undefined })));
    }
    if (this.pending.size === 0) {
      worker.unref();
      this.wakeIdle();
    }
  }

  /** The thread is gone (it could not open the file, or crashed): what was sent to it fails, the next transaction starts another. */
  private lost(worker: Worker, e: Error): void {
    if (this.worker === worker) this.worker = null;
    const failed = [...this.pending].filter(([, waiting]) => waiting.worker === worker);
    if (failed.length === 0) return;
    this.logger.error({ err: e, file: this.file }, 'SQLite write thread lost');
    for (const [id, waiting] of failed) {
      this.pending.delete(id);
      waiting.reject(new StoreUnavailableError(e.message, e));
    }
    if (this.pending.size === 0) this.wakeIdle();
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}

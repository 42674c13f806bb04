import Database, { type Statement } from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { limitPageCache, PAGE_CACHE_KIB } from './sqlite-page-cache';

/**
 * The SQLite reader thread (sqlite-reader.ts starts it). Its connection is read-only: under WAL
 * it reads the last commit while the main connection writes, and a write sent to it fails.
 */

export interface ReaderData {
  readonly file: string;
  /** Prepared statements kept, least recently used dropped first (a list's text varies with its filters). */
  readonly cacheSize: number;
}
export interface Read {
  readonly id: number;
  readonly sql: string;
  readonly params: readonly unknown[];
}
/** What the main thread asks: the reads asked for together, or to stop once the reads before it are answered. */
export type ToReader = { readonly reads: readonly Read[] } | { readonly stop: true };
/** What the worker answers for read `id`: its rows, or the error SQLite raised. */
export type Answer = { readonly id: number; readonly rows: unknown[] } | { readonly id: number; readonly error: string; readonly code: string | null };
/** The answers to one message's reads, in one message. */
export interface FromReader {
  readonly answers: readonly Answer[];
}

const port = parentPort;
if (!port) throw new Error('sqlite-reader.worker runs as a worker thread');
const { file, cacheSize } = workerData as ReaderData;
const db = new Database(file, { readonly: true, fileMustExist: true });
limitPageCache(db, PAGE_CACHE_KIB.reader);
const statements = new Map<string, Statement>();

function statementOf(sql: string): Statement {
  let statement = statements.get(sql);
  if (statement) {
    statements.delete(sql);
  } else {
    statement = db.prepare(sql);
    const oldest = statements.keys().next();
    if (statements.size >= cacheSize && !oldest.done) statements.delete(oldest.value);
  }
  statements.set(sql, statement);
  return statement;
}

function answer(read: Read): Answer {
  try {
    return { id: read.id, rows: statementOf(read.sql).all(...read.params) };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return { id: read.id, error: e instanceof Error ? e.message : String(e), code: typeof code === 'string' ? code : null };
  }
}

port.on('message', (m: ToReader) => {
  if ('stop' in m) {
    db.close();
    port.close();
    return;
  }
  port.postMessage({ answers: m.reads.map(answer) } satisfies FromReader);
});

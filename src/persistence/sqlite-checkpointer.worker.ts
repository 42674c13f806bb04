import Database from 'better-sqlite3';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The checkpoint thread (sqlite-checkpointer.ts starts it). It checkpoints through its own
 * connection to each database, once the WAL holds `checkpointFrames` more frames than its last
 * checkpoint copied. How many frames the WAL holds it reads from the -wal file
 * (https://www.sqlite.org/fileformat2.html#walformat): the frames written since the WAL last
 * started over carry the salt of its header; the older ones after them in the file, another.
 * It never opens the -shm file, on which SQLite holds POSIX locks (closing any descriptor of a
 * file drops the process's locks on it); SQLite locks nothing in the -wal file.
 */

export interface CheckpointerData {
  readonly checkpointFrames: number;
  readonly pollMs: number;
}
/** What the main thread tells the worker. */
export type ToCheckpointer = { readonly open: number; readonly file: string } | { readonly close: number } | { readonly stop: true };
/** What the worker answers: a connection closed, or a database it failed on (`fatal`: it could not open it). */
export type FromCheckpointer = { readonly closed: number } | { readonly failed: number; readonly error: string; readonly fatal: boolean };

interface Checkpointed {
  readonly file: string;
  readonly db: Database.Database;
  /** The -wal file's descriptor, once it exists. */
  wal: number | null;
  /** The salt of the WAL the last checkpoint copied from, and how many of its frames. */
  salt: string | null;
  copied: number;
  /** A failure was reported and no checkpoint succeeded since. */
  failing: boolean;
}

const port = parentPort;
if (!port) throw new Error('sqlite-checkpointer.worker runs as a worker thread');
const { checkpointFrames, pollMs } = workerData as CheckpointerData;
const databases = new Map<number, Checkpointed>();
const failure = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e));
const header = Buffer.alloc(32);
const salt = Buffer.alloc(8);
const send = (message: FromCheckpointer): void => port.postMessage(message);

/** The WAL's frames since it last started over, and its salt (null before any). */
function framesOf(d: Checkpointed): { frames: number; salt: string | null } {
  if (d.wal === null) {
    try {
      d.wal = openSync(`${d.file}-wal`, 'r');
    } catch {
      return { frames: 0, salt: null };
    }
  }
  const wal = d.wal;
  if (readSync(wal, header, 0, 32, 0) < 32) return { frames: 0, salt: null };
  const frameBytes = header.readUInt32BE(8) + 24;
  const current = header.subarray(16, 24);
  const isCurrent = (i: number) => readSync(wal, salt, 0, 8, 32 + i * frameBytes + 8) === 8 && salt.equals(current);
  // Frames [0, low) are the current WAL's, [high, total) older ones.
  let low = 0;
  let high = Math.floor((fstatSync(wal).size - 32) / frameBytes);
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (isCurrent(mid)) low = mid + 1;
    else high = mid;
  }
  return { frames: low, salt: current.toString('hex') };
}

const timer = setInterval(() => {
  for (const [id, d] of databases) {
    try {
      const wal = framesOf(d);
      const copied = wal.salt === d.salt ? d.copied : 0;
      if (wal.frames - copied < checkpointFrames) continue;
      const [result] = d.db.pragma('wal_checkpoint(PASSIVE)') as { checkpointed: number }[];
      d.salt = wal.salt;
      d.copied = result?.checkpointed ?? 0;
      d.failing = false;
    } catch (e) {
      // Once until a checkpoint succeeds again, not at every poll.
      if (!d.failing) send({ failed: id, error: failure(e), fatal: false });
      d.failing = true;
    }
  }
}, pollMs);

port.on('message', (m: ToCheckpointer) => {
  if ('open' in m) {
    try {
      const db = new Database(m.file, { fileMustExist: true });
      databases.set(m.open, { file: m.file, db, wal: null, salt: null, copied: 0, failing: false });
    } catch (e) {
      send({ failed: m.open, error: failure(e), fatal: true });
    }
  } else if ('close' in m) {
    const d = databases.get(m.close);
    databases.delete(m.close);
    if (d) {
      if (d.wal !== null) closeSync(d.wal);
      d.db.close();
    }
    send({ closed: m.close });
  } else {
    clearInterval(timer);
    port.close();
  }
});

import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import type { Logger } from '../logger';
import { SqliteCheckpointer } from '../persistence/sqlite-checkpointer';
import { limitPageCache, PAGE_CACHE_KIB } from '../persistence/sqlite-page-cache';
import { BlobStoreUnavailableError, contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';
import { FilesystemBlobStore } from './filesystem.adapter';

interface Row {
  readonly body: Buffer;
}

/** Puts waiting for the next write transaction, and their callers. */
interface PendingWrites {
  readonly bodies: Map<string, Buffer>;
  readonly waiting: { resolve(): void; reject(e: unknown): void }[];
}

/**
 * The embedded default: objects as rows of DATA_DIR/blobs.sqlite, a database of its own (so
 * blob writes never wait on the gateway's tables, nor they on blobs). A turn writes four to
 * seven small objects; as files, each cost a file (and a directory per turn) whose creation
 * took about as much kernel time as everything else the turn did; as rows they are one
 * append to the write-ahead log each. WAL with synchronous=NORMAL, as the gateway's own
 * SQLite database: a crash of the gateway loses nothing, a power loss at most the last
 * writes, as files written without fsync did. Objects written before this store existed,
 * as files under DATA_DIR/blobs, are still read from there. Puts of one event-loop turn
 * (a turn's instruction and file versions, the payloads of many turns under load) share one
 * transaction, written on the next check phase: one commit instead of one per object. A put
 * resolves once its transaction committed; until then reads of its key see the new body.
 * The WAL is checkpointed on a worker thread (SqliteCheckpointer), not inside these commits.
 */
export class SqliteBlobStore implements BlobStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement<[string, Buffer]>;
  private readonly select: Database.Statement<[string], Row>;
  private readonly files: FilesystemBlobStore;
  private readonly writeAll: Database.Transaction<(bodies: Map<string, Buffer>) => void>;
  private readonly checkpointer: SqliteCheckpointer;
  private pending: PendingWrites | null = null;

  constructor(dataDir: string, logger: Logger) {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'blobs.sqlite');
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    limitPageCache(this.db, PAGE_CACHE_KIB.blobs);
    this.db.exec('CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)');
    this.checkpointer = new SqliteCheckpointer(file, this.db, logger);
    this.upsert = this.db.prepare('INSERT INTO blobs (key, body) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body');
    this.select = this.db.prepare('SELECT body FROM blobs WHERE key = ?');
    this.files = new FilesystemBlobStore(dir);
    this.writeAll = this.db.transaction((bodies: Map<string, Buffer>) => {
      for (const [key, body] of bodies) this.upsert.run(key, body);
    });
  }

  /** Content types follow from the key's extension on read, so none is stored. */
  put(key: string, body: string | Buffer, _contentType?: string): Promise<void> {
    if (!this.db.open) return Promise.reject(closedError());
    let pending = this.pending;
    if (!pending) {
      pending = { bodies: new Map(), waiting: [] };
      this.pending = pending;
      setImmediate(() => this.flush());
    }
    pending.bodies.set(key, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
    return new Promise((resolve, reject) => pending.waiting.push({ resolve, reject }));
  }

  async get(key: string): Promise<BlobObject | null> {
    const body = this.bodyOf(key);
    if (!body) return this.files.get(key);
    return { body: Readable.from([body]), contentType: contentTypeOf(key), sizeBytes: body.length };
  }

  async getText(key: string): Promise<string | null> {
    const body = this.bodyOf(key);
    return body ? body.toString('utf8') : this.files.getText(key);
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.db.prepare('SELECT 1').get();
  }

  /**
   * Writes what is pending and closes the database, then stops the checkpointer (the last
   * connection to close checkpoints the write-ahead log into the database file).
   */
  async close(): Promise<void> {
    try {
      this.flush();
      if (this.db.open) this.db.close();
    } finally {
      await this.checkpointer.close();
    }
  }

  private bodyOf(key: string): Buffer | null {
    this.assertOpen();
    return this.pending?.bodies.get(key) ?? this.select.get(key)?.body ?? null;
  }

  /** One transaction: a reader never sees half an object, nor part of a batch. */
  private flush(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    try {
      this.writeAll(pending.bodies);
    } catch (e) {
      for (const w of pending.waiting) w.reject(e);
      return;
    }
    for (const w of pending.waiting) w.resolve();
  }

  private assertOpen(): void {
    if (!this.db.open) throw closedError();
  }
}

const closedError = () => new BlobStoreUnavailableError('the embedded blob store was closed at shutdown');

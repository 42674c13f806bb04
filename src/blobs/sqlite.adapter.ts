import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import type { Logger } from '../logger';
import { SqliteCheckpointer } from '../persistence/sqlite-checkpointer';
import { BlobStoreUnavailableError, contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';
import { FilesystemBlobStore } from './filesystem.adapter';
import { SqliteBlobWriter } from './sqlite-blob-writer';

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
 * transaction, written on the next check phase by a thread of its own (SqliteBlobWriter):
 * one commit instead of one per object, off the event loop. A put resolves once its
 * transaction committed; until then reads of its key see the new body. Reads go through this
 * thread's own connection (under WAL, the last commit). The WAL is checkpointed on a worker
 * thread (SqliteCheckpointer), not inside these commits.
 */
export class SqliteBlobStore implements BlobStore {
  private readonly db: Database.Database;
  private readonly select: Database.Statement<[string], Row>;
  private readonly files: FilesystemBlobStore;
  private readonly writer: SqliteBlobWriter;
  private readonly checkpointer: SqliteCheckpointer;
  private pending: PendingWrites | null = null;
  /** Batches sent to the writer and not yet committed, oldest first: reads see them. */
  private readonly writing: ReadonlyMap<string, Buffer>[] = [];

  constructor(dataDir: string, logger: Logger) {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'blobs.sqlite');
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)');
    this.writer = new SqliteBlobWriter(file, logger);
    this.checkpointer = new SqliteCheckpointer(file, this.writer.connection, logger);
    this.select = this.db.prepare('SELECT body FROM blobs WHERE key = ?');
    this.files = new FilesystemBlobStore(dir);
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
      await this.writer.close();
      if (this.db.open) this.db.close();
    } finally {
      await this.checkpointer.close();
    }
  }

  private bodyOf(key: string): Buffer | null {
    this.assertOpen();
    return this.pending?.bodies.get(key) ?? this.beingWritten(key) ?? this.select.get(key)?.body ?? null;
  }

  private beingWritten(key: string): Buffer | undefined {
    for (let i = this.writing.length - 1; i >= 0; i--) {
      const body = this.writing[i]?.get(key);
      if (body) return body;
    }
    return undefined;
  }

  /** One transaction: a reader never sees half an object, nor part of a batch. */
  private flush(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    const { bodies, waiting } = pending;
    this.writing.push(bodies);
    const written = this.writer.write(bodies);
    // Leaves `writing` once committed (readers then find it in the table), or failed.
    void written.finally(() => this.writing.splice(this.writing.indexOf(bodies), 1)).then(
      () => waiting.forEach((w) => w.resolve()),
      (e: unknown) => waiting.forEach((w) => w.reject(e)),
    );
  }

  private assertOpen(): void {
    if (!this.db.open) throw closedError();
  }
}

const closedError = () => new BlobStoreUnavailableError('the embedded blob store was closed at shutdown');

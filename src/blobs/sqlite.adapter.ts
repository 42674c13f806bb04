import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { BlobStoreUnavailableError, contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';
import { FilesystemBlobStore } from './filesystem.adapter';

interface Row {
  readonly body: Buffer;
}

/**
 * The embedded default: objects as rows of DATA_DIR/blobs.sqlite, a database of its own (so
 * blob writes never wait on the gateway's tables, nor they on blobs). A turn writes four to
 * seven small objects; as files, each cost a file (and a directory per turn) whose creation
 * took about as much kernel time as everything else the turn did; as rows they are one
 * append to the write-ahead log each. WAL with synchronous=NORMAL, as the gateway's own
 * SQLite database: a crash of the gateway loses nothing, a power loss at most the last
 * writes, as files written without fsync did. Objects written before this store existed,
 * as files under DATA_DIR/blobs, are still read from there.
 */
export class SqliteBlobStore implements BlobStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement<[string, Buffer]>;
  private readonly select: Database.Statement<[string], Row>;
  private readonly files: FilesystemBlobStore;

  constructor(dataDir: string) {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    this.db = new Database(join(dir, 'blobs.sqlite'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec('CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY NOT NULL, body BLOB NOT NULL)');
    this.upsert = this.db.prepare('INSERT INTO blobs (key, body) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body');
    this.select = this.db.prepare('SELECT body FROM blobs WHERE key = ?');
    this.files = new FilesystemBlobStore(dir);
  }

  /** Content types follow from the key's extension on read, so none is stored. */
  async put(key: string, body: string | Buffer, _contentType?: string): Promise<void> {
    this.assertOpen();
    // One statement, so a reader never sees half an object.
    this.upsert.run(key, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  }

  async get(key: string): Promise<BlobObject | null> {
    this.assertOpen();
    const row = this.select.get(key);
    if (!row) return this.files.get(key);
    return { body: Readable.from([row.body]), contentType: contentTypeOf(key), sizeBytes: row.body.length };
  }

  async getText(key: string): Promise<string | null> {
    this.assertOpen();
    const row = this.select.get(key);
    return row ? row.body.toString('utf8') : this.files.getText(key);
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.db.prepare('SELECT 1').get();
  }

  /** Checkpoints the write-ahead log into the database file and closes it. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private assertOpen(): void {
    if (!this.db.open) throw new BlobStoreUnavailableError('the embedded blob store was closed at shutdown');
  }
}

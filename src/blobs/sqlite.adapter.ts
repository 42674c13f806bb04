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
 * The embedded default: objects as plain rows of DATA_DIR/blobs.sqlite, a database of its own
 * (so blob writes never wait on the gateway's tables, nor they on blobs). Rows rather than
 * files because a turn writes several small objects, and a row is one append to the
 * write-ahead log where a file is a file and a directory. WAL with synchronous=NORMAL, as the
 * gateway's own SQLite database: a crash of the gateway loses nothing, a power loss at most
 * the last writes. Each put is its own statement, committed before it resolves; SQLite's
 * automatic checkpoint keeps the log short. Objects written before this store existed, as
 * files under DATA_DIR/blobs, are still read from there.
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
    this.upsert.run(key, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
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

  /** The last connection to close checkpoints the write-ahead log into the database file. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  private bodyOf(key: string): Buffer | null {
    this.assertOpen();
    return this.select.get(key)?.body ?? null;
  }

  private assertOpen(): void {
    if (!this.db.open) throw new BlobStoreUnavailableError('the embedded blob store was closed at shutdown');
  }
}

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { assertCollectionName, describeSpace, sameSpace, spaceMismatch } from './collection';
import { normalize } from './embedder.port';
import { QuantizedRows, type RowLabels } from './quantized-rows';
import { RetrievalError } from './retrieval-error';
import type { ChunkFilter, ChunkPayload, ChunkPlacement, ChunkPoint, EmbeddingSpace, IndexedChunk, ScoredChunk, VectorStore } from './vector-store.port';

const LONE_SURROGATE = /\p{Surrogate}/u;
/** Candidates taken from the int8 scan per result, and at least, before the exact float32 ranking. */
const OVERSAMPLE = 4;
const MIN_CANDIDATES = 32;
/** Rows read per step while loading (the event loop runs between steps); bigger steps left the process more RSS. */
const LOAD_PAGE = 500;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS collections (
  name TEXT PRIMARY KEY NOT NULL, embedder_id TEXT NOT NULL, dimension INTEGER NOT NULL, version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
  collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL,
  repo TEXT NOT NULL, path TEXT NOT NULL, language TEXT, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
  content_hash TEXT NOT NULL, file_hash TEXT NOT NULL, text TEXT NOT NULL, vector BLOB NOT NULL,
  UNIQUE (collection, id)
);
CREATE INDEX IF NOT EXISTS chunks_by_version ON chunks (collection, version);
-- Covers listChunks, which an ingest starts with: it reads no table row.
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (collection, repo, path, id, file_hash);`;

interface CollectionRow { readonly embedder_id: string; readonly dimension: number; readonly version: number }

/** What a load reads of a row: what filters look at, and the vector. */
type LoadRow = RowLabels & { readonly rowid: number; readonly version: number; readonly vector: Buffer };

/** One collection's in-memory copy and the collection version it reflects. */
interface Loaded {
  readonly space: EmbeddingSpace;
  readonly rows: QuantizedRows;
  version: number;
  /** A catch-up under way; every search of the collection waits for it. */
  refreshing: Promise<void> | null;
}

/**
 * The embedded default vector store: chunks as rows of DATA_DIR/vector-index/vectors.sqlite
 * (the source of truth: WAL, crash-safe, shared with `npm run ingest` in another process), and
 * per collection an int8 copy of the vectors in memory (QuantizedRows) that usearch scans
 * exactly. A search takes OVERSAMPLE times as many candidates as it returns from that scan and
 * ranks them by the exact float32 cosine read back from SQLite, so scores are exact and a true
 * neighbour is lost only if quantisation pushes it below dozens of others.
 *
 * Every write bumps its collection's version, and rows written carry it: a reader that sees a
 * newer version applies only the rows written since, and drops rows deleted since (found by
 * their count). Loading reads a page at a time and yields to the event loop between pages, so a
 * gateway keeps answering while a large collection loads.
 */
export class EmbeddedVectorStore implements VectorStore {
  private handle: Database.Database | null = null;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly loaded = new Map<string, Loaded>();
  /**
   * Each collection's row as last read (null: none), valid while the file's data_version is
   * `metaVersion`: every execute asks for its collection, and another process (an ingest)
   * changes the table only by a commit, which moves data_version; this connection's own writes
   * do not move it, so they drop what they change themselves.
   */
  private readonly metas = new Map<string, CollectionRow | null>();
  /** The error of each collection found missing, made once while `metas` holds it missing (making it looks at the disk). */
  private readonly missing = new Map<string, RetrievalError>();
  private metaVersion: number | null = null;

  constructor(private readonly root: string) {}

  async ensureCollection(collection: string, space: EmbeddingSpace): Promise<void> {
    this.guard(collection, () => {
      const existing = this.meta(collection);
      if (existing) return checkSpace(collection, existing, space);
      this.sql('INSERT OR IGNORE INTO collections (name, embedder_id, dimension, version) VALUES (?, ?, ?, 0)').run(collection, space.embedderId, space.dimension);
      this.forgetMeta(collection);
      checkSpace(collection, this.meta(collection)!, space);
    });
  }

  async upsert(collection: string, space: EmbeddingSpace, points: readonly ChunkPoint[]): Promise<void> {
    for (const p of points) {
      // SQLite stores ids as UTF-8, where every lone surrogate reads as U+FFFD.
      if (LONE_SURROGATE.test(p.id)) throw new RetrievalError('bad-request', 'a chunk id must be well-formed Unicode');
      if (p.vector.length !== space.dimension) {
        throw new RetrievalError('embedder-mismatch', `vector of dimension ${p.vector.length} for a collection of dimension ${space.dimension}`);
      }
    }
    this.write(collection, space, (version) => {
      const put = this.sql(
        `INSERT INTO chunks (collection, id, version, repo, path, language, start_line, end_line, content_hash, file_hash, text, vector)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (collection, id) DO UPDATE SET version = excluded.version, repo = excluded.repo, path = excluded.path,
           language = excluded.language, start_line = excluded.start_line, end_line = excluded.end_line,
           content_hash = excluded.content_hash, file_hash = excluded.file_hash, text = excluded.text, vector = excluded.vector`,
      );
      for (const { id, payload: p, vector } of points) {
        // Stored at unit length, so a search is a dot product.
        const unit = normalize(Float32Array.from(vector));
        put.run(collection, id, version, p.repo, p.path, p.language, p.startLine, p.endLine, p.contentHash, p.fileHash, p.text, Buffer.from(unit.buffer));
      }
    });
  }

  async deleteByIds(collection: string, ids: readonly string[]): Promise<void> {
    this.remove(collection, 'id = ?', ids.map((id) => [id]));
  }

  async deleteFiles(collection: string, repo: string, paths: readonly string[]): Promise<void> {
    this.remove(collection, 'repo = ? AND path = ?', paths.map((path) => [repo, path]));
  }

  /** Lines and file hashes are read from SQLite with each hit, so the in-memory copy does not change. */
  async placeChunks(collection: string, fileHash: string, placements: readonly ChunkPlacement[]): Promise<void> {
    if (placements.length === 0) return;
    this.guard(collection, () => {
      if (!this.meta(collection)) throw missing(collection);
      const place = this.sql('UPDATE chunks SET file_hash = ?, start_line = ?, end_line = ? WHERE collection = ? AND id = ?');
      this.db().transaction(() => {
        for (const p of placements) place.run(fileHash, p.startLine, p.endLine, collection, p.id);
      }).immediate();
    });
  }

  async listChunks(collection: string, repo: string): Promise<IndexedChunk[]> {
    return this.guard(collection, () =>
      this.sql<[string, string], IndexedChunk>('SELECT id, path, file_hash AS fileHash FROM chunks WHERE collection = ? AND repo = ?')
        .all(collection, repo),
    );
  }

  async checkIndexed(collection: string): Promise<void> {
    if (this.loaded.has(collection)) return;
    if (!this.guard(collection, () => this.meta(collection))) throw this.notIndexed(collection);
  }

  async search(collection: string, space: EmbeddingSpace, vector: Float32Array, filter: ChunkFilter, limit: number): Promise<ScoredChunk[]> {
    if (vector.length !== space.dimension) {
      throw new RetrievalError('embedder-mismatch', `query of dimension ${vector.length} for vectors of dimension ${space.dimension}`);
    }
    const rows = await this.current(collection, space);
    const k = Math.max(0, Math.floor(limit));
    if (k === 0) return [];
    // One read transaction: one snapshot, and one WAL lock for the few dozen rows read back.
    return this.guard(collection, () => this.db().transaction(() => {
      const query = normalize(Float32Array.from(vector));
      const candidates = rows.nearest(query, filter, Math.max(k * OVERSAMPLE, MIN_CANDIDATES));
      const vectorOf = this.sql<[number], { vector: Buffer }>('SELECT vector FROM chunks WHERE rowid = ?');
      const exact = new Float32Array(space.dimension);
      const scored: { rowid: number; score: number }[] = [];
      for (const rowid of candidates) {
        const row = vectorOf.get(rowid);
        // Deleted by another process since this copy was refreshed.
        if (!row) continue;
        new Uint8Array(exact.buffer).set(row.vector);
        scored.push({ rowid, score: dot(query, exact) });
      }
      scored.sort((a, b) => b.score - a.score);
      const chunkOf = this.sql<[number], ChunkPayload & { id: string }>(
        `SELECT id, repo, path, start_line AS startLine, end_line AS endLine, language, content_hash AS contentHash,
           file_hash AS fileHash, text FROM chunks WHERE rowid = ?`,
      );
      const hits: ScoredChunk[] = [];
      for (const { rowid, score } of scored.slice(0, k)) {
        const row = chunkOf.get(rowid);
        if (!row) continue;
        const { id, ...payload } = row;
        hits.push({ id, score, payload });
      }
      return hits;
    })());
  }

  async close(): Promise<void> {
    await Promise.all([...this.loaded.values()].map(async (c) => c.refreshing?.catch(() => undefined)));
    this.loaded.clear();
    this.forgetConnection();
  }

  /** The database, opened on first use: a damaged file then fails the operation that meets it. */
  private db(): Database.Database {
    if (this.handle) return this.handle;
    mkdirSync(this.root, { recursive: true });
    // Kept at once, so that `guard` closes a damaged file that fails below.
    const db = (this.handle = new Database(join(this.root, 'vectors.sqlite')));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // The ingest CLI and the gateway write and read the same file.
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    return db;
  }

  /** Statements are prepared once per connection. */
  private sql<P extends unknown[] = unknown[], R = unknown>(text: string): Database.Statement<P, R> {
    let statement = this.statements.get(text);
    if (!statement) this.statements.set(text, (statement = this.db().prepare(text)));
    return statement as Database.Statement<P, R>;
  }

  private remove(collection: string, where: string, keys: readonly string[][]): void {
    if (keys.length === 0) return;
    this.write(collection, null, () => {
      const remove = this.sql(`DELETE FROM chunks WHERE collection = ? AND ${where}`);
      for (const key of keys) remove.run(collection, ...key);
    });
  }

  private meta(collection: string): CollectionRow | undefined {
    const version = this.sql<[], number>('PRAGMA data_version').pluck().get()!;
    if (version !== this.metaVersion) {
      this.forgetMetas();
      this.metaVersion = version;
    }
    const known = this.metas.get(collection);
    if (known !== undefined) return known ?? undefined;
    const row = this.readMeta(collection);
    this.metas.set(collection, row ?? null);
    return row;
  }

  private readMeta(collection: string): CollectionRow | undefined {
    return this.sql<[string], CollectionRow>('SELECT embedder_id, dimension, version FROM collections WHERE name = ?')
      .get(collection);
  }

  private notIndexed(collection: string): RetrievalError {
    let error = this.missing.get(collection);
    if (!error) this.missing.set(collection, (error = notIndexed(collection, this.root)));
    return error;
  }

  private forgetMeta(collection: string): void {
    this.metas.delete(collection);
    this.missing.delete(collection);
  }

  private forgetMetas(): void {
    this.metas.clear();
    this.missing.clear();
  }

  /** Statements and what was read belong to the connection, which is closed. */
  private forgetConnection(): void {
    this.statements.clear();
    this.forgetMetas();
    this.metaVersion = null;
    this.handle?.close();
    this.handle = null;
  }

  /** One IMMEDIATE transaction (a writer waits for another) bumping the version `work` gives the rows it writes. */
  private write(collection: string, space: EmbeddingSpace | null, work: (version: number) => void): void {
    this.guard(collection, () => {
      try {
        this.db().transaction(() => {
          // Read under the write lock, never from what was known before it.
          const meta = this.readMeta(collection);
          if (!meta) throw missing(collection);
          if (space) checkSpace(collection, meta, space);
          this.sql('UPDATE collections SET version = ? WHERE name = ?').run(meta.version + 1, collection);
          work(meta.version + 1);
        }).immediate();
      } finally {
        this.forgetMeta(collection);
      }
    });
  }

  /** The collection's in-memory copy, caught up with what any process wrote. */
  private async current(collection: string, space: EmbeddingSpace): Promise<QuantizedRows> {
    for (;;) {
      const meta = this.guard(collection, () => this.meta(collection));
      if (!meta) {
        this.loaded.delete(collection);
        throw this.notIndexed(collection);
      }
      checkSpace(collection, meta, space);
      let c = this.loaded.get(collection);
      if (!c || !sameSpace(c.space, spaceOf(meta))) {
        c = { space: spaceOf(meta), rows: new QuantizedRows(meta.dimension), version: 0, refreshing: null };
        this.loaded.set(collection, c);
      }
      if (c.version === meta.version && !c.refreshing) return c.rows;
      const target = c;
      target.refreshing ??= this.refresh(collection, target, meta.version).finally(() => (target.refreshing = null));
      try {
        await c.refreshing;
      } catch (e) {
        this.loaded.delete(collection);
        throw e;
      }
    }
  }

  /** Applies the rows written since the copy's version, then drops rows deleted since. */
  private async refresh(collection: string, c: Loaded, version: number): Promise<void> {
    const page = this.sql<[string, number, number], LoadRow>(
      `SELECT rowid, version, repo, path, language, vector FROM chunks
       WHERE collection = ? AND (version, rowid) > (?, ?) ORDER BY version, rowid LIMIT ${LOAD_PAGE}`,
    );
    const count = () => this.sql<[string], { n: number }>('SELECT count(*) AS n FROM chunks WHERE collection = ?').get(collection)!.n;
    if (c.version === 0) c.rows.reserve(this.guard(collection, count));
    const unit = new Float32Array(c.space.dimension);
    let after = { version: c.version, rowid: Number.MAX_SAFE_INTEGER };
    for (;;) {
      const rows = this.guard(collection, () => page.all(collection, after.version, after.rowid));
      for (const r of rows) {
        new Uint8Array(unit.buffer).set(r.vector);
        c.rows.set(r.rowid, r, unit);
      }
      if (rows.length < LOAD_PAGE) break;
      after = rows[rows.length - 1]!;
      await new Promise((resolve) => setImmediate(resolve));
    }
    c.version = version;
    if (c.rows.size !== this.guard(collection, count)) {
      const live = this.guard(collection, () =>
        this.sql<[string], { rowid: number }>('SELECT rowid FROM chunks WHERE collection = ?').all(collection),
      );
      c.rows.retain(new Set(live.map((r) => r.rowid)));
    }
  }

  /** Runs `work` with a checked collection name, and reports a damaged database as unavailable. */
  private guard<T>(collection: string, work: () => T): T {
    assertCollectionName(collection);
    try {
      return work();
    } catch (e) {
      // By code, not class: better-sqlite3's native part keeps the SqliteError class it was first loaded with.
      const code = String((e as { code?: unknown }).code);
      if (code.startsWith('SQLITE_BUSY')) throw new RetrievalError('busy', `another process (an ingest?) held the embedded vector index too long`, { cause: e });
      if (/^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
        this.forgetConnection();
        this.loaded.clear();
        throw new RetrievalError('unavailable', `the embedded vector index is damaged; re-run the ingest of "${collection}"`, { cause: e });
      }
      throw e;
    }
  }
}

const spaceOf = (stored: CollectionRow): EmbeddingSpace => ({ embedderId: stored.embedder_id, dimension: stored.dimension });

function checkSpace(collection: string, stored: CollectionRow, space: EmbeddingSpace): void {
  const built = spaceOf(stored);
  if (!sameSpace(built, space)) throw spaceMismatch(collection, describeSpace(built), space);
}

const missing = (collection: string) => new RetrievalError('collection-missing', `vector collection "${collection}" does not exist`);

/**
 * An expected state, not a fault: every execute of an agent context whose collection was
 * never ingested gets here. Built without a stack trace (nobody logs it). An index of an
 * earlier version (a directory of files per collection) is not read: it is named, to be re-ingested.
 */
function notIndexed(collection: string, root: string): RetrievalError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const older = existsSync(join(root, collection, 'meta.json')) ? ' (an index built by an earlier version was found; re-run the ingest)' : '';
    return new RetrievalError('collection-missing', `vector collection "${collection}" has not been indexed yet${older}`);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j]! * b[j]!;
  return s;
}

import { fstatSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { assertCollectionName, describeSpace, sameSpace, spaceMismatch } from './collection';
import { RetrievalError } from './retrieval-error';
import {
  decodeFile,
  GenerationFiles,
  isMissingFile,
  LOG,
  logName,
  readMeta,
  SNAPSHOT,
  snapshotName,
  writeMeta,
  writeSnapshot,
  type Meta,
} from './vector-files';
import { assertLittleEndian, CorruptIndexError, encodeRecords, type LogRecord } from './vector-log';
import type { ChunkFilter, ChunkPlacement, ChunkPoint, EmbeddingSpace, IndexedChunk, ScoredChunk, VectorStore } from './vector-store.port';
import { unitCopy, VectorTable } from './vector-table';

const LONE_SURROGATE = /\p{Surrogate}/u;

interface OpenCollection {
  readonly name: string;
  readonly dir: string;
  meta: Meta;
  /** Identity of meta.json as last read; a rename by another process changes it. */
  metaStamp: string;
  table: VectorTable;
  files: GenerationFiles;
  /** Bytes of the current log already applied to the table. */
  logOffset: number;
  snapshotBytes: number;
}

/** One search waiting in a batch (see `search`). */
interface SearchRequest {
  readonly vector: Float32Array;
  readonly filter: ChunkFilter;
  readonly limit: number;
  resolve(hits: ScoredChunk[]): void;
  reject(error: unknown): void;
}

interface SearchBatch {
  /** The embedding space they search in (describeSpace). */
  readonly space: string;
  readonly requests: SearchRequest[];
}

export interface EmbeddedVectorStoreOptions {
  /** A log is folded into a new snapshot once it outgrows the snapshot and this many bytes. */
  readonly compactFloorBytes?: number;
}

/**
 * The embedded default vector store: one directory per collection under DATA_DIR, holding
 * meta.json (embedder, dimension, generation), a snapshot and an append-only log (see
 * vector-files.ts). In memory: what filtering and listing need and the vectors quantised to
 * int8 (VectorTable); texts and exact float32 vectors are read back from the files for the
 * rows a search ranks. Every operation first catches up with the files, so a gateway sees
 * what `npm run ingest` (another process) wrote without a restart; a restart rebuilds the
 * memory from the snapshot and log. Loading reads the files a piece at a time and yields
 * to the event loop between small batches, so a gateway keeps answering while a large
 * collection loads; operations on one collection run one at a time. One writer process per
 * collection, enforced by a lock file naming its pid.
 */
export class EmbeddedVectorStore implements VectorStore {
  private readonly collections = new Map<string, OpenCollection>();
  private readonly queues = new Map<string, Promise<void>>();
  /** The searches waiting for a collection, while nothing else was queued after them. */
  private readonly searches = new Map<string, SearchBatch>();
  private readonly locks = new Set<string>();
  private readonly compactFloorBytes: number;

  constructor(
    private readonly root: string,
    options: EmbeddedVectorStoreOptions = {},
  ) {
    assertLittleEndian();
    this.compactFloorBytes = options.compactFloorBytes ?? 8 * 1024 * 1024;
  }

  ensureCollection(collection: string, space: EmbeddingSpace): Promise<void> {
    return this.exclusive(collection, async () => {
      if (await this.sync(collection, space)) return;
      const dir = this.dirOf(collection);
      mkdirSync(dir, { recursive: true });
      this.lock(collection);
      // Another process may have created it between the check and the lock.
      if (await this.sync(collection, space)) return;
      writeFileSync(join(dir, snapshotName(1)), '');
      writeFileSync(join(dir, logName(1)), '');
      writeMeta(dir, { format: 1, embedderId: space.embedderId, dimension: space.dimension, generation: 1 });
    });
  }

  upsert(collection: string, space: EmbeddingSpace, points: readonly ChunkPoint[]): Promise<void> {
    return this.exclusive(collection, async () => {
      for (const p of points) {
        // Ids are compared as UTF-8 (IdIndex), where every lone surrogate reads as U+FFFD.
        if (LONE_SURROGATE.test(p.id)) throw new RetrievalError('bad-request', 'a chunk id must be well-formed Unicode');
        if (p.vector.length !== space.dimension) {
          throw new RetrievalError('embedder-mismatch', `vector of dimension ${p.vector.length} for a collection of dimension ${space.dimension}`);
        }
      }
      // Stored at unit length, so a search is a dot product.
      const records: LogRecord[] = points.map((p) => ({ op: 'upsert', id: p.id, payload: p.payload, vector: unitCopy(p.vector) }));
      await this.append(await this.writable(collection, space), records);
    });
  }

  deleteByIds(collection: string, ids: readonly string[]): Promise<void> {
    return this.exclusive(collection, async () => {
      if (ids.length > 0) await this.append(await this.writable(collection), [{ op: 'delete', ids }]);
    });
  }

  deleteFiles(collection: string, repo: string, paths: readonly string[]): Promise<void> {
    return this.exclusive(collection, async () => {
      const c = await this.writable(collection);
      const doomed = new Set(paths);
      const ids = c.table.list(repo).filter((chunk) => doomed.has(chunk.path)).map((chunk) => chunk.id);
      if (ids.length > 0) await this.append(c, [{ op: 'delete', ids }]);
    });
  }

  placeChunks(collection: string, fileHash: string, placements: readonly ChunkPlacement[]): Promise<void> {
    return this.exclusive(collection, async () => {
      if (placements.length > 0) await this.append(await this.writable(collection), [{ op: 'place', fileHash, placements }]);
    });
  }

  listChunks(collection: string, repo: string): Promise<IndexedChunk[]> {
    return this.exclusive(collection, async () => (await this.sync(collection))?.table.list(repo) ?? []);
  }

  /**
   * Searches that arrive while the collection is busy wait together and share one catch-up
   * with the files: every execute searches its org's collection, and a catch-up per search,
   * one after another, made a burst of executes queue here for seconds.
   */
  search(collection: string, space: EmbeddingSpace, vector: Float32Array, filter: ChunkFilter, limit: number): Promise<ScoredChunk[]> {
    return new Promise((resolve, reject) => {
      const request: SearchRequest = { vector, filter, limit, resolve, reject };
      const waiting = this.searches.get(collection);
      if (waiting && waiting.space === describeSpace(space)) {
        waiting.requests.push(request);
        return;
      }
      const batch: SearchBatch = { space: describeSpace(space), requests: [request] };
      this.exclusive(collection, async () => {
        if (this.searches.get(collection) === batch) this.searches.delete(collection);
        this.searchAll(collection, await this.sync(collection, space), batch.requests);
      }).catch((e: unknown) => {
        for (const r of batch.requests) r.reject(e);
      });
      // Set after queueing: `exclusive` closes any batch, so a search never overtakes a write queued after it.
      this.searches.set(collection, batch);
    });
  }

  /**
   * A collection loaded here exists; otherwise its meta file says (read without queueing: a look,
   * not a load). A synchronous stat of a local file takes ~1 µs; the promise one took ~30 µs of
   * main-thread time for the thread-pool round trip, on every retrieval from an unindexed context.
   */
  async checkIndexed(collection: string): Promise<void> {
    if (this.collections.has(collection)) return;
    if (!statSync(join(this.dirOf(collection), 'meta.json'), { throwIfNoEntry: false })) throw notIndexed(collection);
  }

  /** Runs a batch of searches on the collection as caught up (null: it does not exist). */
  private searchAll(collection: string, c: OpenCollection | null, batch: readonly SearchRequest[]): void {
    for (const [i, r] of batch.entries()) {
      if (!c) {
        r.reject(notIndexed(collection));
        continue;
      }
      try {
        r.resolve(c.table.search(r.vector, r.filter, r.limit, c.files));
      } catch (e) {
        if (!(e instanceof CorruptIndexError)) {
          r.reject(e);
          continue;
        }
        // The files changed under the rows (a writer recovering from a torn write): read them again next time.
        this.forget(collection);
        for (const rest of batch.slice(i)) rest.reject(damaged(collection, e));
        return;
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    for (const collection of this.locks) rmSync(join(this.dirOf(collection), 'writer.lock'), { force: true });
    this.locks.clear();
    for (const collection of [...this.collections.keys()]) this.forget(collection);
  }

  // ------------------------------------------------------------------ files

  /** Runs operations on one collection one after another, so a load is never raced. */
  private exclusive<T>(collection: string, work: () => Promise<T>): Promise<T> {
    this.searches.delete(collection);
    const previous = this.queues.get(collection) ?? Promise.resolve();
    const run = previous.then(work);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(collection, settled);
    void settled.then(() => {
      if (this.queues.get(collection) === settled) this.queues.delete(collection);
    });
    return run;
  }

  private dirOf(collection: string): string {
    return join(this.root, assertCollectionName(collection));
  }

  private forget(collection: string): void {
    this.collections.get(collection)?.files.close();
    this.collections.delete(collection);
  }

  /**
   * Brings the in-memory copy up to date with the files (a new generation is loaded, new
   * log frames are applied) and checks its embedder. Null when the collection does not exist.
   */
  private async sync(collection: string, space?: EmbeddingSpace): Promise<OpenCollection | null> {
    const dir = this.dirOf(collection);
    for (let attempt = 0; ; attempt++) {
      try {
        const c = await this.catchUp(collection, dir);
        if (c && space && !sameSpace(c.meta, space)) throw spaceMismatch(collection, describeSpace(c.meta), space);
        return c;
      } catch (e) {
        // A compaction elsewhere replaced the files under us: read the new generation.
        if (isMissingFile(e) && attempt < 3) {
          this.forget(collection);
          continue;
        }
        if (e instanceof CorruptIndexError) {
          this.forget(collection);
          throw damaged(collection, e);
        }
        throw e;
      }
    }
  }

  private async catchUp(collection: string, dir: string): Promise<OpenCollection | null> {
    const metaPath = join(dir, 'meta.json');
    let stamp: string;
    try {
      stamp = stampOf(await stat(metaPath));
    } catch (e) {
      if (!isMissingFile(e)) throw e;
      this.forget(collection);
      return null;
    }
    let c = this.collections.get(collection);
    if (!c || c.metaStamp !== stamp) {
      const meta = readMeta(metaPath);
      if (!c || c.meta.generation !== meta.generation || !sameSpace(c.meta, meta)) {
        this.forget(collection);
        c = await this.load(collection, dir, meta, stamp);
        this.collections.set(collection, c);
      } else {
        c.metaStamp = stamp;
      }
    }
    return this.tail(c);
  }

  /** Reads a generation's snapshot; the log is applied by `tail`. */
  private async load(name: string, dir: string, meta: Meta, metaStamp: string): Promise<OpenCollection> {
    const files = new GenerationFiles(dir, meta.generation);
    try {
      const snapshotBytes = fstatSync(files.fd(SNAPSHOT)).size;
      const table = new VectorTable(meta.dimension);
      // Indexes compacted before the count was recorded: every record holds its float32 vector, so at most this many.
      table.reserve(meta.snapshotRows ?? Math.floor(snapshotBytes / (meta.dimension * 4)));
      await decodeFile(files.fd(SNAPSHOT), 0, snapshotBytes, meta.dimension, (r, base) => table.apply(r, SNAPSHOT, base));
      return { name, dir, meta, metaStamp, table, files, logOffset: 0, snapshotBytes };
    } catch (e) {
      files.close();
      throw e;
    }
  }

  /** Applies log frames written since the last look; returns the collection as now current. */
  private async tail(c: OpenCollection): Promise<OpenCollection> {
    const size = fstatSync(c.files.fd(LOG)).size;
    if (size < c.logOffset) {
      // Only a writer recovering from a torn write shortens a log: read it all again.
      this.forget(c.name);
      const fresh = await this.load(c.name, c.dir, c.meta, c.metaStamp);
      this.collections.set(c.name, fresh);
      return this.tail(fresh);
    }
    if (size > c.logOffset) {
      c.logOffset = await decodeFile(c.files.fd(LOG), c.logOffset, size, c.meta.dimension, (r, base) => c.table.apply(r, LOG, base));
    }
    return c;
  }

  /** The collection, caught up and locked for this process's writes. */
  private async writable(collection: string, space?: EmbeddingSpace): Promise<OpenCollection> {
    const missing = () => new RetrievalError('collection-missing', `vector collection "${collection}" does not exist`);
    if (!(await this.sync(collection, space))) throw missing();
    if (!this.locks.has(collection)) {
      this.lock(collection);
      const locked = await this.sync(collection, space);
      if (!locked) throw missing();
      // A writer that died mid-append may have left half a frame; cut it before appending.
      const log = join(locked.dir, logName(locked.meta.generation));
      if (statSync(log).size > locked.logOffset) truncateSync(log, locked.logOffset);
    }
    const c = this.collections.get(collection);
    if (!c) throw missing();
    return c;
  }

  private async append(c: OpenCollection, records: readonly LogRecord[]): Promise<void> {
    try {
      appendFileSync(join(c.dir, logName(c.meta.generation)), encodeRecords(records, c.meta.dimension));
    } catch (e) {
      // Slots were planned against this copy; start from the files again.
      this.forget(c.name);
      throw e;
    }
    const current = await this.tail(c);
    if (current.logOffset > Math.max(current.snapshotBytes, this.compactFloorBytes)) this.compact(current);
  }

  /** Writes the live rows as the next generation's snapshot and starts an empty log. */
  private compact(c: OpenCollection): void {
    const generation = c.meta.generation + 1;
    const locations = writeSnapshot(c.dir, generation, c.table, c.files);
    writeFileSync(join(c.dir, logName(generation)), '');
    const previous = c.meta.generation;
    c.meta = { ...c.meta, generation, snapshotRows: c.table.size };
    writeMeta(c.dir, c.meta);
    c.metaStamp = stampOf(statSync(join(c.dir, 'meta.json')));
    const files = new GenerationFiles(c.dir, generation);
    for (const [slot, location] of locations) c.table.relocate(slot, location);
    c.files.close();
    c.files = files;
    c.logOffset = 0;
    c.snapshotBytes = fstatSync(files.fd(SNAPSHOT)).size;
    rmSync(join(c.dir, snapshotName(previous)), { force: true });
    rmSync(join(c.dir, logName(previous)), { force: true });
  }

  private lock(collection: string): void {
    if (this.locks.has(collection)) return;
    const path = join(this.dirOf(collection), 'writer.lock');
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new RetrievalError('busy', `vector collection "${collection}" is being written by another process (pid ${holder})`);
      }
      // The holder is gone (or is us): the lock is stale.
      writeFileSync(path, String(process.pid));
    }
    this.locks.add(collection);
  }
}

/**
 * An expected state, not a fault: every execute of an agent context whose collection was
 * never ingested gets here. Built without a stack trace (nobody logs it; capturing one was
 * the most expensive part of such a retrieval).
 */
function notIndexed(collection: string): RetrievalError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RetrievalError('collection-missing', `vector collection "${collection}" has not been indexed yet`);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const damaged = (collection: string, cause: unknown) =>
  new RetrievalError('unavailable', `the embedded index of "${collection}" is damaged; re-run the ingest`, { cause });

const stampOf = (st: { ino: number; size: number; mtimeMs: number }) => `${st.ino}:${st.size}:${st.mtimeMs}`;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

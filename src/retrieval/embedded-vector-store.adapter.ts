import {
  appendFileSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { assertCollectionName, describeSpace, sameSpace, spaceMismatch } from './collection';
import { RetrievalError } from './retrieval-error';
import {
  assertLittleEndian,
  CorruptIndexError,
  countUpserts,
  decodeRecords,
  encodeRecords,
  type DecodedRecord,
  type LogRecord,
} from './vector-log';
import type { ChunkFilter, ChunkPoint, EmbeddingSpace, IndexedChunk, ScoredChunk, VectorStore } from './vector-store.port';
import { unitCopy, VectorTable } from './vector-table';

interface Meta {
  readonly format: 1;
  readonly embedderId: string;
  readonly dimension: number;
  /** Names the snapshot and log in use; a compaction moves to the next one. */
  readonly generation: number;
}

interface OpenCollection {
  readonly name: string;
  readonly dir: string;
  meta: Meta;
  /** Identity of meta.json as last read; a rename by another process changes it. */
  metaStamp: string;
  table: VectorTable;
  /** Bytes of the current log already applied to the table. */
  logOffset: number;
  snapshotBytes: number;
}

export interface EmbeddedVectorStoreOptions {
  /** A log is folded into a new snapshot once it outgrows the snapshot and this many bytes. */
  readonly compactFloorBytes?: number;
}

const SNAPSHOT_WRITE_BATCH = 512;
/** Records decoded between two yields to the event loop while a collection loads. */
const DECODE_SLICE = 1000;

/**
 * The embedded default vector store: one directory per collection under DATA_DIR, holding
 * meta.json (embedder, dimension, generation), a snapshot and an append-only log, with the
 * whole collection in memory for exact search (VectorTable). Every operation first catches
 * up with the files, so a gateway sees what `npm run ingest` (another process) wrote without
 * a restart. Loading yields to the event loop every DECODE_SLICE records, so a gateway
 * keeps answering while a large collection loads; operations on one collection run one at
 * a time. One writer process per collection, enforced by a lock file naming its pid.
 */
export class EmbeddedVectorStore implements VectorStore {
  private readonly collections = new Map<string, OpenCollection>();
  private readonly queues = new Map<string, Promise<void>>();
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

  setFileHash(collection: string, ids: readonly string[], fileHash: string): Promise<void> {
    return this.exclusive(collection, async () => {
      if (ids.length > 0) await this.append(await this.writable(collection), [{ op: 'file-hash', ids, fileHash }]);
    });
  }

  listChunks(collection: string, repo: string): Promise<IndexedChunk[]> {
    return this.exclusive(collection, async () => (await this.sync(collection))?.table.list(repo) ?? []);
  }

  search(collection: string, space: EmbeddingSpace, vector: Float32Array, filter: ChunkFilter, limit: number): Promise<ScoredChunk[]> {
    return this.exclusive(collection, async () => {
      const c = await this.sync(collection, space);
      if (!c) throw new RetrievalError('collection-missing', `vector collection "${collection}" has not been indexed yet`);
      return c.table.search(vector, filter, limit);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    for (const collection of this.locks) rmSync(join(this.dirOf(collection), 'writer.lock'), { force: true });
    this.locks.clear();
    this.collections.clear();
  }

  // ------------------------------------------------------------------ files

  /** Runs operations on one collection one after another, so a load is never raced. */
  private exclusive<T>(collection: string, work: () => Promise<T>): Promise<T> {
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
          this.collections.delete(collection);
          continue;
        }
        if (e instanceof CorruptIndexError) {
          throw new RetrievalError('unavailable', `the embedded index of "${collection}" is damaged; re-run the ingest`, { cause: e });
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
      this.collections.delete(collection);
      return null;
    }
    let c = this.collections.get(collection);
    if (!c || c.metaStamp !== stamp) {
      const meta = readMeta(metaPath);
      if (!c || c.meta.generation !== meta.generation || !sameSpace(c.meta, meta)) {
        c = await this.load(collection, dir, meta, stamp);
        this.collections.set(collection, c);
      } else {
        c.metaStamp = stamp;
      }
    }
    return this.tail(c);
  }

  private async load(name: string, dir: string, meta: Meta, metaStamp: string): Promise<OpenCollection> {
    const snapshot = await readFile(join(dir, snapshotName(meta.generation)));
    // Sized for the snapshot at once: growing a large table copies every vector.
    const table = new VectorTable(meta.dimension, Math.max(1024, countUpserts(snapshot)));
    await decodeYielding(snapshot, meta.dimension, table);
    return { name, dir, meta, metaStamp, table, logOffset: 0, snapshotBytes: snapshot.length };
  }

  /** Applies log frames written since the last look; returns the collection as now current. */
  private async tail(c: OpenCollection): Promise<OpenCollection> {
    const file = await open(join(c.dir, logName(c.meta.generation)), 'r');
    try {
      const { size } = await file.stat();
      if (size < c.logOffset) {
        // Only a writer recovering from a torn write shortens a log: read it all again.
        const fresh = await this.load(c.name, c.dir, c.meta, c.metaStamp);
        this.collections.set(c.name, fresh);
        return this.tail(fresh);
      }
      if (size === c.logOffset) return c;
      const buf = Buffer.allocUnsafe(size - c.logOffset);
      let read = 0;
      while (read < buf.length) {
        const { bytesRead } = await file.read(buf, read, buf.length - read, c.logOffset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      c.logOffset += await decodeYielding(buf.subarray(0, read), c.meta.dimension, c.table);
      return c;
    } finally {
      await file.close();
    }
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
    appendFileSync(join(c.dir, logName(c.meta.generation)), encodeRecords(records, c.meta.dimension));
    const current = await this.tail(c);
    if (current.logOffset > Math.max(current.snapshotBytes, this.compactFloorBytes)) this.compact(current);
  }

  /** Writes the live rows as the next generation's snapshot and starts an empty log. */
  private compact(c: OpenCollection): void {
    const generation = c.meta.generation + 1;
    const fd = openSync(join(c.dir, snapshotName(generation)), 'w');
    let bytes = 0;
    try {
      let batch: LogRecord[] = [];
      const flush = () => {
        const buf = encodeRecords(batch, c.meta.dimension);
        writeSync(fd, buf);
        bytes += buf.length;
        batch = [];
      };
      for (const row of c.table.rows()) {
        batch.push({ op: 'upsert', id: row.id, payload: row.payload, vector: row.vector });
        if (batch.length === SNAPSHOT_WRITE_BATCH) flush();
      }
      flush();
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    writeFileSync(join(c.dir, logName(generation)), '');
    const previous = c.meta.generation;
    c.meta = { ...c.meta, generation };
    writeMeta(c.dir, c.meta);
    c.metaStamp = stampOf(statSync(join(c.dir, 'meta.json')));
    c.logOffset = 0;
    c.snapshotBytes = bytes;
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

/** Applies frames to a table, letting other work run between slices; returns the bytes used. */
async function decodeYielding(buf: Buffer, dimension: number, table: VectorTable): Promise<number> {
  let offset = 0;
  for (;;) {
    let decoded = 0;
    offset += decodeRecords(
      buf.subarray(offset),
      dimension,
      (record) => {
        decoded++;
        apply(table, record);
      },
      DECODE_SLICE,
    );
    if (decoded < DECODE_SLICE) return offset;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function apply(table: VectorTable, record: DecodedRecord): void {
  switch (record.op) {
    case 'upsert':
      table.upsertBytes(record.id, record.vectorBytes, record.payload);
      return;
    case 'delete':
      for (const id of record.ids) table.remove(id);
      return;
    case 'file-hash':
      for (const id of record.ids) table.setFileHash(id, record.fileHash);
      return;
  }
}

const snapshotName = (generation: number) => `${generation}.snapshot`;
const logName = (generation: number) => `${generation}.log`;
const stampOf = (st: { ino: number; size: number; mtimeMs: number }) => `${st.ino}:${st.size}:${st.mtimeMs}`;

function readMeta(path: string): Meta {
  let meta: Partial<Meta>;
  try {
    meta = JSON.parse(readFileSync(path, 'utf8')) as Partial<Meta>;
  } catch (e) {
    if (isMissingFile(e)) throw e;
    throw new CorruptIndexError(`unreadable ${path}`);
  }
  if (
    meta.format !== 1 ||
    typeof meta.embedderId !== 'string' ||
    !Number.isInteger(meta.dimension) ||
    !Number.isInteger(meta.generation)
  ) {
    throw new CorruptIndexError(`unreadable ${path}`);
  }
  return meta as Meta;
}

/** Replaced atomically: readers see the old or the new meta.json, never half of one. */
function writeMeta(dir: string, meta: Meta): void {
  const tmp = join(dir, `meta.json.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(meta));
  renameSync(tmp, join(dir, 'meta.json'));
}

const isMissingFile = (e: unknown): boolean => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

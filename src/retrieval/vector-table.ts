import { matchesPathPrefix, normalizePathPrefix } from './chunk-filter';
import { normalize } from './embedder.port';
import type { ChunkFilter, ChunkPayload, IndexedChunk, ScoredChunk } from './vector-store.port';

const ANY = -2;
const NO_LANGUAGE = -1;
/** Rows buffered before they are spread over the dimensions (see writeRow). */
const STAGED_ROWS = 64;

/**
 * The embedded index's memory. Vectors are unit length on the way in, so cosine is a plain
 * dot product, and live in one Float32Array laid out dimension by dimension (component j of
 * row i at j * capacity + i). A search walks the query's non-zero dimensions, each a
 * contiguous run, adding into one score per row: a hashed keyword query touches a few dozen
 * of a thousand dimensions and so reads a few dozen runs, a dense model query reads them
 * all, sequentially either way. Repo and language are interned to integers and the filter
 * picks the rows before any is scored. Exact: the best `limit` rows are kept in a small
 * sorted buffer.
 */
export class VectorTable {
  private ids: string[] = [];
  private payloads: ChunkPayload[] = [];
  private capacity: number;
  private vectors: Float32Array;
  private repoCodes: Int32Array;
  private languageCodes: Int32Array;
  private readonly slotOf = new Map<string, number>();
  private readonly codes = new Map<string, number>();
  /** One score per row, reused by every search (searches are synchronous). */
  private scores = new Float64Array(0);
  private readonly row: Float32Array;
  private readonly staged: Float32Array;
  private readonly stagedSlots = new Int32Array(STAGED_ROWS);
  private stagedCount = 0;

  constructor(
    readonly dimension: number,
    capacity = 1024,
  ) {
    this.capacity = Math.max(1, capacity);
    this.vectors = new Float32Array(this.capacity * dimension);
    this.repoCodes = new Int32Array(this.capacity);
    this.languageCodes = new Int32Array(this.capacity);
    this.row = new Float32Array(dimension);
    this.staged = new Float32Array(STAGED_ROWS * dimension);
  }

  get size(): number {
    return this.ids.length;
  }

  /** Stores a copy of `vector`, scaled to unit length. */
  upsert(id: string, vector: Float32Array, payload: ChunkPayload): void {
    if (vector.length !== this.dimension) {
      throw new RangeError(`vector of dimension ${vector.length} in a table of dimension ${this.dimension}`);
    }
    this.writeRow(this.slotFor(id, payload), unitCopy(vector));
  }

  /** Stores a vector given as little-endian float32 bytes that are already unit length (from the log). */
  upsertBytes(id: string, bytes: Uint8Array, payload: ChunkPayload): void {
    if (bytes.length !== this.dimension * 4) throw new RangeError('vector bytes of the wrong length');
    // The bytes may sit at any offset of the file buffer; copy them into an aligned row first.
    new Uint8Array(this.row.buffer).set(bytes);
    this.writeRow(this.slotFor(id, payload), this.row);
  }

  remove(id: string): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    this.flush();
    // Move the last row into the hole so rows stay dense.
    const last = this.ids.length - 1;
    if (slot !== last) {
      const lastId = this.ids[last];
      this.ids[slot] = lastId;
      this.payloads[slot] = this.payloads[last];
      this.repoCodes[slot] = this.repoCodes[last];
      this.languageCodes[slot] = this.languageCodes[last];
      for (let j = 0, at = 0; j < this.dimension; j++, at += this.capacity) this.vectors[at + slot] = this.vectors[at + last];
      this.slotOf.set(lastId, slot);
    }
    this.ids.pop();
    this.payloads.pop();
    this.slotOf.delete(id);
    return true;
  }

  setFileHash(id: string, fileHash: string): void {
    const slot = this.slotOf.get(id);
    if (slot !== undefined) this.payloads[slot] = { ...this.payloads[slot], fileHash };
  }

  search(query: Float32Array, filter: ChunkFilter, limit: number): ScoredChunk[] {
    if (query.length !== this.dimension) {
      throw new RangeError(`query of dimension ${query.length} in a table of dimension ${this.dimension}`);
    }
    const repo = filter.repo == null ? ANY : this.codes.get(filter.repo);
    const language = filter.language == null ? ANY : this.codes.get(filter.language);
    if (repo === undefined || language === undefined) return [];
    const prefix = normalizePathPrefix(filter.pathPrefix);
    const n = this.ids.length;
    const q = unitCopy(query);
    this.flush();

    // Rows that pass the filter; null when every row does (no index to go through).
    let rows: Int32Array | null = null;
    let m = n;
    if (repo !== ANY || language !== ANY || prefix !== null) {
      rows = new Int32Array(n);
      m = 0;
      for (let i = 0; i < n; i++) {
        if (repo !== ANY && this.repoCodes[i] !== repo) continue;
        if (language !== ANY && this.languageCodes[i] !== language) continue;
        if (prefix !== null && !matchesPathPrefix(this.payloads[i].path, prefix)) continue;
        rows[m++] = i;
      }
    }
    const k = Math.min(Math.max(0, Math.floor(limit)), m);
    if (k === 0) return [];

    if (this.scores.length < m) this.scores = new Float64Array(Math.max(m, this.capacity));
    const scores = this.scores;
    scores.fill(0, 0, m);
    const v = this.vectors;
    const cap = this.capacity;
    // The query's non-zero dimensions, taken four at a time: one pass over the scores
    // per four dimensions instead of per dimension.
    const dims: number[] = [];
    for (let j = 0; j < this.dimension; j++) if (q[j] !== 0) dims.push(j);
    let g = 0;
    for (; g + 3 < dims.length; g += 4) {
      const a0 = dims[g] * cap;
      const a1 = dims[g + 1] * cap;
      const a2 = dims[g + 2] * cap;
      const a3 = dims[g + 3] * cap;
      const q0 = q[dims[g]];
      const q1 = q[dims[g + 1]];
      const q2 = q[dims[g + 2]];
      const q3 = q[dims[g + 3]];
      if (rows === null) {
        for (let i = 0; i < m; i++) scores[i] += v[a0 + i] * q0 + v[a1 + i] * q1 + v[a2 + i] * q2 + v[a3 + i] * q3;
      } else {
        for (let t = 0; t < m; t++) {
          const i = rows[t];
          scores[t] += v[a0 + i] * q0 + v[a1 + i] * q1 + v[a2 + i] * q2 + v[a3 + i] * q3;
        }
      }
    }
    for (; g < dims.length; g++) {
      const at = dims[g] * cap;
      const qj = q[dims[g]];
      if (rows === null) {
        for (let i = 0; i < m; i++) scores[i] += v[at + i] * qj;
      } else {
        for (let t = 0; t < m; t++) scores[t] += v[at + rows[t]] * qj;
      }
    }

    const topScore = new Float64Array(k);
    const topRow = new Int32Array(k);
    let filled = 0;
    let floor = -Infinity;
    for (let t = 0; t < m; t++) {
      const score = scores[t];
      if (filled === k && score <= floor) continue;
      let p = filled < k ? filled++ : k - 1;
      while (p > 0 && topScore[p - 1] < score) {
        topScore[p] = topScore[p - 1];
        topRow[p] = topRow[p - 1];
        p--;
      }
      topScore[p] = score;
      topRow[p] = rows === null ? t : rows[t];
      if (filled === k) floor = topScore[k - 1];
    }
    const out: ScoredChunk[] = [];
    for (let r = 0; r < filled; r++) {
      const slot = topRow[r];
      out.push({ id: this.ids[slot], score: topScore[r], payload: this.payloads[slot] });
    }
    return out;
  }

  /** Chunks of one repository, as an ingest compares them with the working tree. */
  list(repo: string): IndexedChunk[] {
    const code = this.codes.get(repo);
    if (code === undefined) return [];
    const out: IndexedChunk[] = [];
    for (let i = 0; i < this.ids.length; i++) {
      if (this.repoCodes[i] === code) out.push({ id: this.ids[i], path: this.payloads[i].path, fileHash: this.payloads[i].fileHash });
    }
    return out;
  }

  /** Every row with a copy of its stored (unit) vector, for writing a snapshot. */
  *rows(): Generator<{ id: string; payload: ChunkPayload; vector: Float32Array }> {
    this.flush();
    const d = this.dimension;
    const block = new Float32Array(STAGED_ROWS * d);
    for (let start = 0; start < this.ids.length; start += STAGED_ROWS) {
      const count = Math.min(STAGED_ROWS, this.ids.length - start);
      // Gathered a block of rows at a time: each dimension's run is read in order.
      for (let j = 0; j < d; j++) {
        const at = j * this.capacity + start;
        for (let r = 0; r < count; r++) block[r * d + j] = this.vectors[at + r];
      }
      for (let r = 0; r < count; r++) {
        yield { id: this.ids[start + r], payload: this.payloads[start + r], vector: block.slice(r * d, (r + 1) * d) };
      }
    }
  }

  /**
   * Rows are staged and spread over the dimensions STAGED_ROWS at a time: one row alone
   * would touch every dimension's run once (a cache miss each), a batch of consecutive
   * rows writes a short contiguous piece of each run. Loading an index is mostly this.
   */
  private writeRow(slot: number, vector: Float32Array): void {
    const r = this.stagedCount;
    const staged = this.staged;
    const d = this.dimension;
    // Staged dimension by dimension too, so the flush reads it in order.
    for (let j = 0, at = r; j < d; j++, at += STAGED_ROWS) staged[at] = vector[j];
    this.stagedSlots[r] = slot;
    this.stagedCount = r + 1;
    if (this.stagedCount === STAGED_ROWS) this.flush();
  }

  private flush(): void {
    const count = this.stagedCount;
    if (count === 0) return;
    const slots = this.stagedSlots;
    const staged = this.staged;
    const vectors = this.vectors;
    const cap = this.capacity;
    const d = this.dimension;
    for (let j = 0; j < d; j++) {
      const at = j * cap;
      const from = j * STAGED_ROWS;
      // In staging order, so a row written twice keeps its last value.
      for (let r = 0; r < count; r++) vectors[at + slots[r]] = staged[from + r];
    }
    this.stagedCount = 0;
  }

  private slotFor(id: string, payload: ChunkPayload): number {
    let slot = this.slotOf.get(id);
    if (slot === undefined) {
      slot = this.ids.length;
      this.grow(slot + 1);
      this.ids.push(id);
      this.payloads.push(payload);
      this.slotOf.set(id, slot);
    } else {
      this.payloads[slot] = payload;
    }
    this.repoCodes[slot] = this.code(payload.repo);
    this.languageCodes[slot] = payload.language === null ? NO_LANGUAGE : this.code(payload.language);
    return slot;
  }

  private code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.codes.size;
      this.codes.set(value, code);
    }
    return code;
  }

  private grow(rows: number): void {
    if (rows <= this.capacity) return;
    this.flush();
    const next = Math.max(rows, this.capacity * 2);
    const vectors = new Float32Array(next * this.dimension);
    for (let j = 0; j < this.dimension; j++) {
      vectors.set(this.vectors.subarray(j * this.capacity, j * this.capacity + this.ids.length), j * next);
    }
    this.vectors = vectors;
    const repoCodes = new Int32Array(next);
    repoCodes.set(this.repoCodes);
    this.repoCodes = repoCodes;
    const languageCodes = new Int32Array(next);
    languageCodes.set(this.languageCodes);
    this.languageCodes = languageCodes;
    this.capacity = next;
  }
}

/** A unit-length copy (a zero vector stays zero), so every score is a cosine. */
export const unitCopy = (vector: Float32Array): Float32Array => normalize(Float32Array.from(vector));

import { matchesPathPrefix, normalizePathPrefix } from './chunk-filter';
import type { ChunkFilter, ChunkPayload, IndexedChunk, ScoredChunk } from './vector-store.port';

const ANY = -2;
const NO_LANGUAGE = -1;

/**
 * The embedded index's memory: every vector in one Float32Array (row i at i * dimension),
 * unit length on the way in so cosine is a plain dot product, and repo/language interned
 * to integers so the filter is checked before a row is scored. Exact search: one pass
 * over the rows that pass the filter, keeping the best `limit` in a small sorted buffer.
 */
export class VectorTable {
  private ids: string[] = [];
  private payloads: ChunkPayload[] = [];
  private vectors: Float32Array;
  private repoCodes: Int32Array;
  private languageCodes: Int32Array;
  private readonly slotOf = new Map<string, number>();
  private readonly codes = new Map<string, number>();

  constructor(
    readonly dimension: number,
    capacity = 1024,
  ) {
    this.vectors = new Float32Array(capacity * dimension);
    this.repoCodes = new Int32Array(capacity);
    this.languageCodes = new Int32Array(capacity);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /** Stores a copy of `vector`, scaled to unit length. */
  upsert(id: string, vector: Float32Array, payload: ChunkPayload): void {
    if (vector.length !== this.dimension) {
      throw new RangeError(`vector of dimension ${vector.length} in a table of dimension ${this.dimension}`);
    }
    const slot = this.slotFor(id, payload);
    this.vectors.set(unitCopy(vector), slot * this.dimension);
  }

  /** Stores a vector given as little-endian float32 bytes that are already unit length (from the log). */
  upsertBytes(id: string, bytes: Uint8Array, payload: ChunkPayload): void {
    if (bytes.length !== this.dimension * 4) throw new RangeError('vector bytes of the wrong length');
    const slot = this.slotFor(id, payload);
    new Uint8Array(this.vectors.buffer, slot * this.dimension * 4, bytes.length).set(bytes);
  }

  remove(id: string): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    // Swap the last row into the hole so rows stay dense.
    const last = this.ids.length - 1;
    if (slot !== last) {
      const lastId = this.ids[last];
      this.ids[slot] = lastId;
      this.payloads[slot] = this.payloads[last];
      this.repoCodes[slot] = this.repoCodes[last];
      this.languageCodes[slot] = this.languageCodes[last];
      this.vectors.copyWithin(slot * this.dimension, last * this.dimension, (last + 1) * this.dimension);
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
    const k = Math.min(Math.max(0, Math.floor(limit)), n);
    if (k === 0) return [];

    const d = this.dimension;
    const v = this.vectors;
    query = unitCopy(query);
    const repoCodes = this.repoCodes;
    const languageCodes = this.languageCodes;
    const payloads = this.payloads;
    const topScore = new Float64Array(k);
    const topSlot = new Int32Array(k);
    let filled = 0;
    let floor = -Infinity;
    for (let i = 0; i < n; i++) {
      if (repo !== ANY && repoCodes[i] !== repo) continue;
      if (language !== ANY && languageCodes[i] !== language) continue;
      if (prefix !== null && !matchesPathPrefix(payloads[i].path, prefix)) continue;
      const base = i * d;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let j = 0;
      for (; j + 3 < d; j += 4) {
        s0 += v[base + j] * query[j];
        s1 += v[base + j + 1] * query[j + 1];
        s2 += v[base + j + 2] * query[j + 2];
        s3 += v[base + j + 3] * query[j + 3];
      }
      for (; j < d; j++) s0 += v[base + j] * query[j];
      const score = s0 + s1 + s2 + s3;
      if (filled === k && score <= floor) continue;
      let p = filled < k ? filled++ : k - 1;
      while (p > 0 && topScore[p - 1] < score) {
        topScore[p] = topScore[p - 1];
        topSlot[p] = topSlot[p - 1];
        p--;
      }
      topScore[p] = score;
      topSlot[p] = i;
      if (filled === k) floor = topScore[k - 1];
    }
    const out: ScoredChunk[] = [];
    for (let r = 0; r < filled; r++) {
      const slot = topSlot[r];
      out.push({ id: this.ids[slot], score: topScore[r], payload: payloads[slot] });
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

  /** Every row with a view of its stored (unit) vector; for writing a snapshot. */
  *rows(): Generator<{ id: string; payload: ChunkPayload; vector: Float32Array }> {
    for (let i = 0; i < this.ids.length; i++) {
      yield { id: this.ids[i], payload: this.payloads[i], vector: this.vectors.subarray(i * this.dimension, (i + 1) * this.dimension) };
    }
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
    const capacity = this.repoCodes.length;
    if (rows <= capacity) return;
    const next = Math.max(rows, capacity * 2);
    const vectors = new Float32Array(next * this.dimension);
    vectors.set(this.vectors);
    this.vectors = vectors;
    const repoCodes = new Int32Array(next);
    repoCodes.set(this.repoCodes);
    this.repoCodes = repoCodes;
    const languageCodes = new Int32Array(next);
    languageCodes.set(this.languageCodes);
    this.languageCodes = languageCodes;
  }
}

/** A unit-length copy (a zero vector stays zero), so every score is a cosine. */
export function unitCopy(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  const scale = sum === 0 ? 0 : 1 / Math.sqrt(sum);
  return vector.map((x) => x * scale);
}

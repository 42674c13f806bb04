import { exactSearch, MetricKind } from 'usearch';
import { matchesPathPrefix, normalizePathPrefix, normalizePathPrefixes } from './chunk-filter';
import type { ChunkFilter } from './vector-store.port';

/** The most a filtered search copies rows into at once (about 5,000 rows of 1,536 dimensions). */
const SCRATCH_BYTES = 8 * 1024 * 1024;
const NO_LANGUAGE = -1;
/** A filter field that is not set, and one naming a value no row has. */
const ANY = -2;
const NONE = -3;

/** What a row is filtered on, as stored. */
export interface RowLabels {
  readonly repo: string;
  readonly language: string | null;
  readonly path: string;
}

/**
 * The embedded store's in-memory copy of one collection: every row's vector as int8 plus the
 * labels a filter looks at (interned), keyed by the row's SQLite rowid. Searches are usearch's
 * exact (brute-force, SIMD) cosine scan over all rows or over the rows a filter lets through,
 * so a filter is always honoured and never costs results, as it would after an approximate
 * graph search. Each vector is scaled by its own largest component before rounding, so the
 * small components of a unit vector in many dimensions keep about seven bits; the store then
 * ranks the candidates by their exact float32 cosine.
 *
 * Rows are kept dense (a removal moves the last row into the hole), so a scan reads live rows only.
 */
export class QuantizedRows {
  private matrix = new Int8Array(0);
  private rowids = new Float64Array(0);
  private repos = new Int32Array(0);
  private languages = new Int32Array(0);
  private paths = new Int32Array(0);
  private count = 0;
  private readonly positions = new Map<number, number>();
  /** Distinct repos, languages and paths, and their codes. */
  private readonly names: string[] = [];
  private readonly codes = new Map<string, number>();
  private scratch = new Int8Array(0);
  private readonly query: Int8Array;

  constructor(
    readonly dimension: number,
    private readonly scratchBytes = SCRATCH_BYTES,
  ) {
    this.query = new Int8Array(dimension);
  }

  get size(): number {
    return this.count;
  }

  /** Stores (or replaces) a row. */
  set(rowid: number, labels: RowLabels, vector: Float32Array): void {
    let at = this.positions.get(rowid);
    if (at === undefined) {
      if (this.count === this.rowids.length) this.resize(this.count + Math.max(1024, Math.ceil(this.count / 4)));
      at = this.count++;
      this.positions.set(rowid, at);
      this.rowids[at] = rowid;
    }
    this.repos[at] = this.code(labels.repo);
    this.languages[at] = labels.language === null ? NO_LANGUAGE : this.code(labels.language);
    this.paths[at] = this.code(labels.path);
    quantize(vector, this.matrix.subarray(at * this.dimension, (at + 1) * this.dimension));
  }

  /** Drops every row whose rowid is not in `live`. */
  retain(live: ReadonlySet<number>): void {
    for (const rowid of [...this.positions.keys()]) if (!live.has(rowid)) this.remove(rowid);
  }

  /** Makes room for `rows` rows at once (a collection about to be loaded). */
  reserve(rows: number): void {
    if (rows > this.rowids.length) this.resize(rows);
  }

  /** Up to `count` rowids among the rows `filter` lets through, nearest first by int8 cosine. */
  nearest(query: Float32Array, filter: ChunkFilter, count: number): number[] {
    const d = this.dimension;
    quantize(query, this.query);
    const passing = this.passing(filter);
    if (!passing) {
      const n = Math.min(count, this.count);
      if (n <= 0) return [];
      const { keys } = exactSearch(this.matrix.subarray(0, this.count * d), this.query, d, n, MetricKind.Cos, 1);
      return Array.from(keys, (key) => this.rowids[Number(key)]!);
    }
    const n = Math.min(count, passing.length);
    if (n <= 0) return [];
    // Copying rows is far cheaper than the arithmetic on them; a block at a time bounds the copy.
    const blockRows = Math.max(1, Math.min(passing.length, Math.floor(this.scratchBytes / d)));
    if (this.scratch.length < blockRows * d) this.scratch = new Int8Array(blockRows * d);
    const found: { readonly rowid: number; readonly distance: number }[] = [];
    for (let start = 0; start < passing.length; start += blockRows) {
      const size = Math.min(blockRows, passing.length - start);
      for (let i = 0; i < size; i++) {
        const at = passing[start + i]!;
        this.scratch.set(this.matrix.subarray(at * d, (at + 1) * d), i * d);
      }
      const { keys, distances } = exactSearch(this.scratch.subarray(0, size * d), this.query, d, Math.min(n, size), MetricKind.Cos, 1);
      keys.forEach((key, i) => found.push({ rowid: this.rowids[passing[start + Number(key)]!]!, distance: distances[i]! }));
    }
    // One block: already in order. Several: the n nearest of every block's n nearest are the n nearest.
    if (passing.length > blockRows) found.sort((a, b) => a.distance - b.distance);
    return found.slice(0, n).map((f) => f.rowid);
  }

  /** Positions of the rows `filter` lets through; null when it lets every row through. */
  private passing(filter: ChunkFilter): number[] | null {
    const codeOf = (value: string | null | undefined) => (value == null ? ANY : (this.codes.get(value) ?? NONE));
    const repo = codeOf(filter.repo);
    const language = codeOf(filter.language);
    const prefix = normalizePathPrefix(filter.pathPrefix);
    const anyOf = normalizePathPrefixes(filter.pathPrefixes);
    if (repo === ANY && language === ANY && prefix === null && anyOf === null) return null;
    // Per path code, 0: not yet checked, 1: matches, 2: does not. Rows of one file share a path.
    const paths = new Uint8Array(this.names.length);
    const out: number[] = [];
    for (let at = 0; at < this.count; at++) {
      if ((repo !== ANY && this.repos[at] !== repo) || (language !== ANY && this.languages[at] !== language)) continue;
      const code = this.paths[at]!;
      if (paths[code] === 0) {
        const path = this.names[code]!;
        const matches = (prefix === null || matchesPathPrefix(path, prefix)) && (anyOf === null || anyOf.some((p) => matchesPathPrefix(path, p)));
        paths[code] = matches ? 1 : 2;
      }
      if (paths[code] === 1) out.push(at);
    }
    return out;
  }

  private code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) this.codes.set(value, (code = this.names.push(value) - 1));
    return code;
  }

  private remove(rowid: number): void {
    const at = this.positions.get(rowid);
    if (at === undefined) return;
    this.positions.delete(rowid);
    const last = --this.count;
    if (at === last) return;
    const d = this.dimension;
    this.matrix.copyWithin(at * d, last * d, (last + 1) * d);
    const moved = this.rowids[last]!;
    this.rowids[at] = moved;
    for (const labels of [this.repos, this.languages, this.paths]) labels[at] = labels[last]!;
    this.positions.set(moved, at);
  }

  private resize(next: number): void {
    const grow = <T extends Int8Array | Int32Array | Float64Array>(old: T, make: (n: number) => T, width = 1): T => {
      const a = make(next * width);
      a.set(old.subarray(0, this.count * width));
      return a;
    };
    this.matrix = grow(this.matrix, (n) => new Int8Array(n), this.dimension);
    this.rowids = grow(this.rowids, (n) => new Float64Array(n));
    const int32 = (n: number) => new Int32Array(n);
    this.repos = grow(this.repos, int32);
    this.languages = grow(this.languages, int32);
    this.paths = grow(this.paths, int32);
  }
}

/** Rounds `vector` scaled so that its largest component is ±127 (a zero vector stays zero). */
function quantize(vector: Float32Array, into: Int8Array): void {
  let max = 0;
  for (let j = 0; j < vector.length; j++) max = Math.max(max, Math.abs(vector[j]!));
  const scale = max > 0 ? 127 / max : 0;
  for (let j = 0; j < vector.length; j++) into[j] = Math.round(vector[j]! * scale);
}

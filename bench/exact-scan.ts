import { matchesPathPrefix, normalizePathPrefix } from '../src/retrieval/chunk-filter';
import type { ChunkFilter, ChunkPayload, ChunkPlacement, ChunkPoint, EmbeddingSpace, VectorStore } from '../src/retrieval/vector-store.port';

const BLOCK_ROWS = 4096;

export interface ExactHit {
  readonly id: string;
  readonly score: number;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
}

/**
 * The bench's baseline and ground truth: the plain exact search anyone would write in a few
 * lines, sharing no code with the store. Unit vectors row after row in float32 blocks, the
 * filter checked per row, a dot product per passing row, the best k kept in a sorted list.
 */
export class ExactScan {
  private readonly blocks: Float32Array[] = [];
  private readonly rows: { id: string; payload: Omit<ChunkPayload, 'text'> }[] = [];

  constructor(readonly dimension: number) {}

  get size(): number {
    return this.rows.length;
  }

  add(point: ChunkPoint): void {
    const i = this.rows.length;
    if (i % BLOCK_ROWS === 0) this.blocks.push(new Float32Array(BLOCK_ROWS * this.dimension));
    const v = point.vector;
    let norm = 0;
    for (let j = 0; j < v.length; j++) norm += v[j]! * v[j]!;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const block = this.blocks[this.blocks.length - 1]!;
    const at = (i % BLOCK_ROWS) * this.dimension;
    for (let j = 0; j < v.length; j++) block[at + j] = v[j]! * scale;
    const { text: _text, ...payload } = point.payload;
    this.rows.push({ id: point.id, payload });
  }

  /** Cosine of a unit vector and row `b`. */
  cosine(a: Float32Array, b: number): number {
    const d = this.dimension;
    const block = this.blocks[Math.floor(b / BLOCK_ROWS)]!;
    const at = (b % BLOCK_ROWS) * d;
    let dot = 0;
    for (let j = 0; j < d; j++) dot += a[j]! * block[at + j]!;
    return dot;
  }

  row(i: number): Float32Array {
    const d = this.dimension;
    return this.blocks[Math.floor(i / BLOCK_ROWS)]!.subarray((i % BLOCK_ROWS) * d, ((i % BLOCK_ROWS) + 1) * d);
  }

  search(query: Float32Array, filter: ChunkFilter, k: number): ExactHit[] {
    const d = this.dimension;
    const prefix = normalizePathPrefix(filter.pathPrefix);
    const top: { row: number; score: number }[] = [];
    for (let i = 0; i < this.rows.length; i++) {
      const p = this.rows[i]!.payload;
      if (filter.repo != null && p.repo !== filter.repo) continue;
      if (filter.language != null && p.language !== filter.language) continue;
      if (prefix !== null && !matchesPathPrefix(p.path, prefix)) continue;
      const block = this.blocks[Math.floor(i / BLOCK_ROWS)]!;
      const at = (i % BLOCK_ROWS) * d;
      let score = 0;
      for (let j = 0; j < d; j++) score += block[at + j]! * query[j]!;
      if (top.length === k && score <= top[k - 1]!.score) continue;
      let p2 = top.length < k ? top.length : k - 1;
      top[p2] = { row: i, score };
      while (p2 > 0 && top[p2 - 1]!.score < score) {
        [top[p2 - 1], top[p2]] = [top[p2]!, top[p2 - 1]!];
        p2--;
      }
    }
    return top.map(({ row, score }) => {
      const r = this.rows[row]!;
      return { id: r.id, score, path: r.payload.path, startLine: r.payload.startLine, endLine: r.payload.endLine };
    });
  }
}

/** Passes everything through to a store, copying each stored point into an ExactScan and timing the store. */
export class CapturingStore implements VectorStore {
  storeMs = 0;
  constructor(
    private readonly inner: VectorStore,
    readonly exact: ExactScan,
  ) {}
  ensureCollection(c: string, s: EmbeddingSpace) {
    return this.inner.ensureCollection(c, s);
  }
  async upsert(c: string, s: EmbeddingSpace, points: readonly ChunkPoint[]) {
    for (const p of points) this.exact.add(p);
    const t0 = performance.now();
    await this.inner.upsert(c, s, points);
    this.storeMs += performance.now() - t0;
  }
  deleteByIds(c: string, ids: readonly string[]) {
    return this.inner.deleteByIds(c, ids);
  }
  deleteFiles(c: string, repo: string, paths: readonly string[]) {
    return this.inner.deleteFiles(c, repo, paths);
  }
  placeChunks(c: string, h: string, placements: readonly ChunkPlacement[]) {
    return this.inner.placeChunks(c, h, placements);
  }
  listChunks(c: string, repo: string) {
    return this.inner.listChunks(c, repo);
  }
  search(c: string, s: EmbeddingSpace, v: Float32Array, f: ChunkFilter, k: number) {
    return this.inner.search(c, s, v, f, k);
  }
  close() {
    return this.inner.close();
  }
}

import { exactSearch, MetricKind } from 'usearch';

/** The most a filtered search copies rows into at once (about 5,000 rows of 1,536 dimensions). */
const SCRATCH_BYTES = 8 * 1024 * 1024;

/**
 * Every row's vector as int8, one row after another, scanned by usearch's SIMD cosine
 * kernel: a quarter of float32's memory and a few milliseconds for 50,000 rows of 1,536
 * dimensions. Each vector is scaled by its own largest component before rounding, so the
 * small components of a unit vector in many dimensions keep about seven bits; the cosine
 * of two such rows is within a fraction of a percent of the float32 one, close enough to
 * pick the candidates an exact ranking then orders (VectorTable).
 *
 * Rows are kept dense (a removal moves the last row into the hole), so a scan reads live
 * rows only; slots name rows from the outside.
 */
export class QuantizedVectors {
  private matrix: Int8Array;
  private capacity: number;
  private count = 0;
  private rowOfSlot = new Int32Array(0);
  private slotOfRow: Int32Array;
  private scratch = new Int8Array(0);
  private readonly query: Int8Array;

  constructor(
    readonly dimension: number,
    private readonly scratchBytes = SCRATCH_BYTES,
  ) {
    this.capacity = 1024;
    this.matrix = new Int8Array(this.capacity * dimension);
    this.slotOfRow = new Int32Array(this.capacity);
    this.query = new Int8Array(dimension);
  }

  get size(): number {
    return this.count;
  }

  /** Stores (or replaces) the vector of `slot`. */
  set(slot: number, vector: Float32Array): void {
    if (slot >= this.rowOfSlot.length) {
      const grown = new Int32Array(Math.max(slot + 1, this.rowOfSlot.length * 2, 1024)).fill(-1);
      grown.set(this.rowOfSlot);
      this.rowOfSlot = grown;
    }
    let row = this.rowOfSlot[slot]!;
    if (row < 0) {
      if (this.count === this.capacity) this.grow();
      row = this.count++;
      this.rowOfSlot[slot] = row;
      this.slotOfRow[row] = slot;
    }
    quantize(vector, this.matrix.subarray(row * this.dimension, (row + 1) * this.dimension));
  }

  remove(slot: number): void {
    const row = slot < this.rowOfSlot.length ? this.rowOfSlot[slot]! : -1;
    if (row < 0) return;
    const last = --this.count;
    if (row !== last) {
      const d = this.dimension;
      this.matrix.copyWithin(row * d, last * d, (last + 1) * d);
      const moved = this.slotOfRow[last]!;
      this.slotOfRow[row] = moved;
      this.rowOfSlot[moved] = row;
    }
    this.rowOfSlot[slot] = -1;
  }

  /**
   * Up to `count` slots, nearest first by quantised cosine, among `slots` (every row when
   * null). A subset is gathered into a scratch matrix first (copying rows is far cheaper
   * than the arithmetic on them), a block of at most `scratchBytes` at a time, so a filter
   * that lets most rows through does not keep a second copy of the matrix for good.
   */
  search(query: Float32Array, count: number, slots: Int32Array | null): number[] {
    const d = this.dimension;
    const rows = slots ? slots.length : this.count;
    const n = Math.min(count, rows);
    if (n <= 0) return [];
    quantize(query, this.query);
    if (!slots) {
      const { keys } = exactSearch(this.matrix.subarray(0, rows * d), this.query, d, n, MetricKind.Cos, 1);
      return Array.from(keys, (key) => this.slotOfRow[Number(key)]!);
    }
    const blockRows = Math.max(1, Math.min(rows, Math.floor(this.scratchBytes / d)));
    if (this.scratch.length < blockRows * d) this.scratch = new Int8Array(blockRows * d);
    const found: { readonly slot: number; readonly distance: number }[] = [];
    for (let start = 0; start < rows; start += blockRows) {
      const size = Math.min(blockRows, rows - start);
      for (let i = 0; i < size; i++) {
        const row = this.rowOfSlot[slots[start + i]!]!;
        this.scratch.set(this.matrix.subarray(row * d, (row + 1) * d), i * d);
      }
      const { keys, distances } = exactSearch(this.scratch.subarray(0, size * d), this.query, d, Math.min(n, size), MetricKind.Cos, 1);
      keys.forEach((key, i) => found.push({ slot: slots[start + Number(key)]!, distance: distances[i]! }));
    }
    // One block: already in order. Several: the n nearest of every block's n nearest are the n nearest.
    if (rows > blockRows) found.sort((a, b) => a.distance - b.distance);
    return found.slice(0, n).map((f) => f.slot);
  }

  /** Makes room for `rows` rows at once (a snapshot about to be loaded): no doubling past what is needed. */
  reserve(rows: number): void {
    if (rows > this.capacity) this.resize(rows);
  }

  /** A quarter more each time: the matrix is most of the index's memory, so growing by half of it or more wastes much. */
  private grow(): void {
    this.resize(this.capacity + Math.max(1024, Math.ceil(this.capacity / 4)));
  }

  private resize(next: number): void {
    const matrix = new Int8Array(next * this.dimension);
    matrix.set(this.matrix.subarray(0, this.count * this.dimension));
    this.matrix = matrix;
    const slotOfRow = new Int32Array(next);
    slotOfRow.set(this.slotOfRow.subarray(0, this.count));
    this.slotOfRow = slotOfRow;
    this.capacity = next;
  }
}

/** Rounds `vector` scaled so that its largest component is ±127 (a zero vector stays zero). */
function quantize(vector: Float32Array, into: Int8Array): void {
  let max = 0;
  for (let j = 0; j < vector.length; j++) max = Math.max(max, Math.abs(vector[j]!));
  const scale = max > 0 ? 127 / max : 0;
  for (let j = 0; j < vector.length; j++) into[j] = Math.round(vector[j]! * scale);
}

/** Marks a hash table cell whose id was deleted: probes go on past it, an insert may reuse it. */
const TOMBSTONE = -1;
const MIN_TABLE = 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The embedded index's chunk ids, slot by id and id by slot, kept outside the JS heap: their
 * UTF-8 bytes one after another in one buffer, found through an open-addressing hash table of
 * slots. A Map of 50,000 UUID strings took ~5 MB of heap (50 MB at 500,000), and loading it
 * made V8 grow its young generation by as much again, since every id survived its collections.
 */
export class IdIndex {
  private bytes = new Uint8Array(64 * 1024);
  /** Bytes of `bytes` in use, ids of deleted slots included until the next compaction. */
  private used = 0;
  private dead = 0;
  /** Per slot: where its id starts in `bytes`, and its length (-1: no id). */
  private offsets = new Int32Array(0);
  private lengths = new Int32Array(0);
  /** Slot + 1 per cell; 0 is empty, TOMBSTONE deleted. */
  private table = new Int32Array(MIN_TABLE);
  private count = 0;
  private tombstones = 0;
  private key = new Uint8Array(256);
  private keyLength = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): number | undefined {
    const cell = this.find(id);
    return cell < 0 ? undefined : this.table[cell]! - 1;
  }

  /** Gives `id` the slot `slot`, which must hold no id yet; `id` must not be indexed. */
  set(id: string, slot: number): void {
    if ((this.count + this.tombstones + 1) * 2 > this.table.length) this.rehash();
    this.encode(id);
    this.ensureSlot(slot);
    if (this.used + this.keyLength > this.bytes.length) this.makeRoom(this.keyLength);
    this.bytes.set(this.key.subarray(0, this.keyLength), this.used);
    this.offsets[slot] = this.used;
    this.lengths[slot] = this.keyLength;
    this.used += this.keyLength;
    const mask = this.table.length - 1;
    let cell = hash(this.key, 0, this.keyLength) & mask;
    while (this.table[cell]! > 0) cell = (cell + 1) & mask;
    if (this.table[cell] === TOMBSTONE) this.tombstones--;
    this.table[cell] = slot + 1;
    this.count++;
  }

  /** Forgets `id`; its slot, or undefined when it was not indexed. */
  delete(id: string): number | undefined {
    const cell = this.find(id);
    if (cell < 0) return undefined;
    const slot = this.table[cell]! - 1;
    this.table[cell] = TOMBSTONE;
    this.tombstones++;
    this.count--;
    this.dead += this.lengths[slot]!;
    this.lengths[slot] = -1;
    return slot;
  }

  idOf(slot: number): string {
    if (!this.hasSlot(slot)) throw new RangeError(`slot ${slot} holds no id`);
    const start = this.offsets[slot]!;
    return decoder.decode(this.bytes.subarray(start, start + this.lengths[slot]!));
  }

  hasSlot(slot: number): boolean {
    return slot < this.lengths.length && this.lengths[slot]! >= 0;
  }

  /** Slots holding an id, ascending. */
  slots(): number[] {
    const out: number[] = [];
    for (let slot = 0; slot < this.lengths.length; slot++) if (this.lengths[slot]! >= 0) out.push(slot);
    return out;
  }

  /** The table cell holding `id`, or -1. Leaves `id`'s bytes in `key`. */
  private find(id: string): number {
    this.encode(id);
    const mask = this.table.length - 1;
    for (let cell = hash(this.key, 0, this.keyLength) & mask; ; cell = (cell + 1) & mask) {
      const entry = this.table[cell]!;
      if (entry === 0) return -1;
      if (entry > 0 && this.holds(entry - 1)) return cell;
    }
  }

  private holds(slot: number): boolean {
    if (this.lengths[slot] !== this.keyLength) return false;
    const start = this.offsets[slot]!;
    for (let i = 0; i < this.keyLength; i++) if (this.bytes[start + i] !== this.key[i]) return false;
    return true;
  }

  private encode(id: string): void {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    if (id.length * 3 > this.key.length) this.key = new Uint8Array(id.length * 3);
    this.keyLength = encoder.encodeInto(id, this.key).written;
  }

  /** Makes room for slots below `rows` at once (a snapshot about to be loaded), as VectorTable.reserve does for its rows. */
  reserve(rows: number): void {
    if (rows > this.lengths.length) this.resizeSlots(rows);
  }

  private ensureSlot(slot: number): void {
    if (slot >= this.lengths.length) this.resizeSlots(Math.max(slot + 1, this.lengths.length * 2, MIN_TABLE));
  }

  private resizeSlots(size: number): void {
    const offsets = new Int32Array(size);
    offsets.set(this.offsets);
    const lengths = new Int32Array(size).fill(-1);
    lengths.set(this.lengths);
    this.offsets = offsets;
    this.lengths = lengths;
  }

  /** Room for `more` bytes: the live ids packed into a new buffer, the same size while they fill at most half of it, else half again what they need. */
  private makeRoom(more: number): void {
    const needed = this.used - this.dead + more;
    const packed = new Uint8Array(needed * 2 <= this.bytes.length ? this.bytes.length : Math.ceil(needed * 1.5));
    let at = 0;
    for (let slot = 0; slot < this.lengths.length; slot++) {
      const length = this.lengths[slot]!;
      if (length < 0) continue;
      const start = this.offsets[slot]!;
      packed.set(this.bytes.subarray(start, start + length), at);
      this.offsets[slot] = at;
      at += length;
    }
    this.bytes = packed;
    this.used = at;
    this.dead = 0;
  }

  private rehash(): void {
    const size = Math.max(MIN_TABLE, nextPowerOfTwo((this.count + 1) * 4));
    const table = new Int32Array(size);
    const mask = size - 1;
    for (const entry of this.table) {
      if (entry <= 0) continue;
      const slot = entry - 1;
      let cell = hash(this.bytes, this.offsets[slot]!, this.lengths[slot]!) & mask;
      while (table[cell] !== 0) cell = (cell + 1) & mask;
      table[cell] = entry;
    }
    this.table = table;
    this.tombstones = 0;
  }
}

/** FNV-1a over `length` bytes from `start`. */
function hash(bytes: Uint8Array, start: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < start + length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

const nextPowerOfTwo = (n: number): number => 2 ** Math.ceil(Math.log2(n));

import { normalize } from './embedder.port';
import { IdIndex } from './id-index';
import { Interner } from './interner';
import { QuantizedVectors } from './quantized-vectors';
import { RowFilter } from './row-filter';
import { parseUpsertDoc, type DecodedRecord } from './vector-log';
import type { ChunkFilter, ChunkPayload, IndexedChunk, ScoredChunk } from './vector-store.port';

/** Reads bytes of the collection's files back: file 0 is the snapshot, file 1 the log. */
export interface RecordSource {
  read(file: number, offset: number, length: number, into: Uint8Array): void;
}

/** A row's record in the files, for reading its JSON and vector back. */
export interface RecordLocation {
  readonly file: number;
  readonly jsonOffset: number;
  readonly jsonLength: number;
}

const NO_LANGUAGE = -1;

/** Candidates taken from the quantised scan per result, and at least, before the exact ranking. */
const OVERSAMPLE = 4;
const MIN_CANDIDATES = 32;

/**
 * The embedded index's memory: what each row needs for filtering and listing (interned
 * repo, language, path and file hash; its lines; where its record is in the files; its id,
 * in an IdIndex) and its vector quantised to int8 (QuantizedVectors), all in typed arrays. Texts, payloads and exact float32 vectors
 * stay in the files and are read back for the few rows a search ranks or returns, so
 * memory holds a quarter of the vectors' float32 size plus about a hundred bytes per row.
 *
 * A search scans the quantised vectors of the rows that pass the filter (so a filter is
 * always honoured and never costs results), takes OVERSAMPLE times as many candidates as
 * it returns, and ranks those by their exact float32 cosine read from the files: scores
 * are exact, and a true neighbour is lost only if quantisation pushes it below dozens of
 * others.
 */
export class VectorTable {
  private capacity = 0;
  private repoCodes = new Int32Array(0);
  private languageCodes = new Int32Array(0);
  private pathCodes = new Int32Array(0);
  private fileHashCodes = new Int32Array(0);
  private startLines = new Int32Array(0);
  private endLines = new Int32Array(0);
  private files = new Uint8Array(0);
  private jsonOffsets = new Float64Array(0);
  private jsonLengths = new Int32Array(0);
  private readonly ids = new IdIndex();
  private readonly free: number[] = [];
  private highWater = 0;
  private readonly strings = new Interner();
  private readonly quantized: QuantizedVectors;
  private readonly vectorBytes: number;
  private readonly row: Float32Array;

  constructor(readonly dimension: number) {
    this.quantized = new QuantizedVectors(dimension);
    this.vectorBytes = dimension * 4;
    this.row = new Float32Array(dimension);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Applies one decoded record; `base` is the file offset of the buffer it was decoded from. */
  apply(record: DecodedRecord, file: number, base: number): void {
    switch (record.op) {
      case 'upsert':
        this.upsert(record, file, base);
        return;
      case 'delete':
        for (const id of record.ids) this.remove(id);
        return;
      case 'place':
        record.ids.forEach((id, i) => {
          const slot = this.ids.get(id);
          if (slot === undefined) return;
          this.fileHashCodes[slot] = this.strings.code(record.fileHash);
          if (record.lines) {
            this.startLines[slot] = record.lines[2 * i]!;
            this.endLines[slot] = record.lines[2 * i + 1]!;
          }
        });
        return;
    }
  }

  remove(id: string): boolean {
    const slot = this.ids.delete(id);
    if (slot === undefined) return false;
    this.quantized.remove(slot);
    this.free.push(slot);
    return true;
  }

  /** Chunks of one repository, as an ingest compares them with the working tree. */
  list(repo: string): IndexedChunk[] {
    const code = this.strings.find(repo);
    const out: IndexedChunk[] = [];
    if (code === undefined) return out;
    for (let slot = 0; slot < this.highWater; slot++) {
      if (this.ids.hasSlot(slot) && this.repoCodes[slot] === code) {
        out.push({ id: this.ids.idOf(slot), path: this.strings.value(this.pathCodes[slot]!), fileHash: this.strings.value(this.fileHashCodes[slot]!) });
      }
    }
    return out;
  }

  /** Live slots in ascending order. */
  slots(): number[] {
    return this.ids.slots();
  }

  relocate(slot: number, location: RecordLocation): void {
    this.files[slot] = location.file;
    this.jsonOffsets[slot] = location.jsonOffset;
    this.jsonLengths[slot] = location.jsonLength;
  }

  /** The stored record of a slot as it reads now: its payload with the current file hash and lines, and its id. */
  record(slot: number, source: RecordSource): { id: string; payload: ChunkPayload } {
    const json = new Uint8Array(this.jsonLengths[slot]!);
    source.read(this.files[slot]!, this.jsonOffsets[slot]!, json.length, json);
    const { id, p } = parseUpsertDoc(Buffer.from(json.buffer, json.byteOffset, json.length));
    const fileHash = this.strings.value(this.fileHashCodes[slot]!);
    return { id, payload: { ...p, fileHash, startLine: this.startLines[slot]!, endLine: this.endLines[slot]! } };
  }

  /** A slot's exact (unit) vector, read from its file. */
  vector(slot: number, source: RecordSource, into: Float32Array = new Float32Array(this.dimension)): Float32Array {
    source.read(this.files[slot]!, this.jsonOffsets[slot]! + this.jsonLengths[slot]!, this.vectorBytes, new Uint8Array(into.buffer, into.byteOffset, this.vectorBytes));
    return into;
  }

  search(query: Float32Array, filter: ChunkFilter, limit: number, source: RecordSource): ScoredChunk[] {
    if (query.length !== this.dimension) {
      throw new RangeError(`query of dimension ${query.length} in a table of dimension ${this.dimension}`);
    }
    const q = normalize(Float32Array.from(query));
    const rows = new RowFilter(filter, this.strings);
    const passing = rows.everything ? null : this.passing(rows);
    const m = passing ? passing.length : this.size;
    const k = Math.min(Math.max(0, Math.floor(limit)), m);
    if (k === 0) return [];
    const candidates = this.quantized.search(q, Math.max(k * OVERSAMPLE, MIN_CANDIDATES), passing);
    const top = new TopK(k);
    for (const slot of candidates) top.offer(slot, dot(q, this.vector(slot, source, this.row)));
    return top.sorted().map(({ slot, score }) => {
      const { id, payload } = this.record(slot, source);
      return { id, score, payload };
    });
  }

  private passing(rows: RowFilter): Int32Array {
    const out: number[] = [];
    for (let slot = 0; slot < this.highWater; slot++) {
      if (this.ids.hasSlot(slot) && rows.accepts(this.repoCodes[slot]!, this.languageCodes[slot]!, this.pathCodes[slot]!)) out.push(slot);
    }
    return Int32Array.from(out);
  }

  private upsert(record: Extract<DecodedRecord, { op: 'upsert' }>, file: number, base: number): void {
    let slot = this.ids.get(record.id);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.highWater;
      this.grow(slot + 1);
      this.ids.set(record.id, slot);
    }
    const p = record.payload;
    this.repoCodes[slot] = this.strings.code(p.repo);
    this.languageCodes[slot] = p.language === null ? NO_LANGUAGE : this.strings.code(p.language);
    this.pathCodes[slot] = this.strings.code(p.path);
    this.fileHashCodes[slot] = this.strings.code(p.fileHash);
    this.startLines[slot] = p.startLine;
    this.endLines[slot] = p.endLine;
    this.relocate(slot, { file, jsonOffset: base + record.jsonOffset, jsonLength: record.jsonLength });
    // The bytes may sit at any offset of the file buffer; copy them into an aligned row first.
    new Uint8Array(this.row.buffer).set(record.vectorBytes);
    this.quantized.set(slot, this.row);
  }

  /** Makes room for `rows` rows at once, before a snapshot of about that many is loaded. */
  reserve(rows: number): void {
    this.resize(rows);
    this.ids.reserve(rows);
    this.quantized.reserve(rows);
  }

  private grow(slots: number): void {
    if (slots > this.highWater) this.highWater = slots;
    if (slots <= this.capacity) return;
    this.resize(Math.max(slots, this.capacity * 2, 1024));
  }

  private resize(next: number): void {
    if (next <= this.capacity) return;
    const int32 = (old: Int32Array) => {
      const a = new Int32Array(next);
      a.set(old);
      return a;
    };
    this.repoCodes = int32(this.repoCodes);
    this.languageCodes = int32(this.languageCodes);
    this.pathCodes = int32(this.pathCodes);
    this.fileHashCodes = int32(this.fileHashCodes);
    this.startLines = int32(this.startLines);
    this.endLines = int32(this.endLines);
    this.jsonLengths = int32(this.jsonLengths);
    const offsets = new Float64Array(next);
    offsets.set(this.jsonOffsets);
    this.jsonOffsets = offsets;
    const files = new Uint8Array(next);
    files.set(this.files);
    this.files = files;
    this.capacity = next;
  }
}

/** The best k (slot, score) pairs seen, best first. */
class TopK {
  private readonly scores: Float64Array;
  private readonly slots: Int32Array;
  private filled = 0;

  constructor(private readonly k: number) {
    this.scores = new Float64Array(k);
    this.slots = new Int32Array(k);
  }

  offer(slot: number, score: number): void {
    if (this.filled === this.k && score <= this.scores[this.k - 1]!) return;
    let p = this.filled < this.k ? this.filled++ : this.k - 1;
    while (p > 0 && this.scores[p - 1]! < score) {
      this.scores[p] = this.scores[p - 1]!;
      this.slots[p] = this.slots[p - 1]!;
      p--;
    }
    this.scores[p] = score;
    this.slots[p] = slot;
  }

  sorted(): { slot: number; score: number }[] {
    return Array.from({ length: this.filled }, (_, i) => ({ slot: this.slots[i]!, score: this.scores[i]! }));
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < a.length; j += 4) {
    s0 += a[j]! * b[j]!;
    s1 += a[j + 1]! * b[j + 1]!;
    s2 += a[j + 2]! * b[j + 2]!;
    s3 += a[j + 3]! * b[j + 3]!;
  }
  for (; j < a.length; j++) s0 += a[j]! * b[j]!;
  return s0 + s1 + s2 + s3;
}

/** A unit-length copy (a zero vector stays zero), so every score is a cosine. */
export const unitCopy = (vector: Float32Array): Float32Array => normalize(Float32Array.from(vector));

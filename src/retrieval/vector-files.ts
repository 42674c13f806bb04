import { closeSync, fsyncSync, openSync, readFileSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptIndexError, decodeRecords, encodeRecords, upsertSpans, type DecodedRecord, type LogRecord } from './vector-log';
import type { RecordLocation, RecordSource, VectorTable } from './vector-table';

/**
 * The files of one embedded collection's directory:
 *   meta.json              embedder, dimension, generation (replaced atomically)
 *   <g>.snapshot           the rows of generation g (upserts only)
 *   <g>.log                what was appended since
 */
export interface Meta {
  readonly format: 1;
  readonly embedderId: string;
  readonly dimension: number;
  /** Names the snapshot and log in use; a compaction moves to the next one. */
  readonly generation: number;
  /** Rows in that generation's snapshot, so a reader sizes its memory once (absent before it was recorded). */
  readonly snapshotRows?: number;
}

export const SNAPSHOT = 0;
export const LOG = 1;

export const snapshotName = (generation: number) => `${generation}.snapshot`;
export const logName = (generation: number) => `${generation}.log`;

/** Bytes read from a file per piece while decoding it. */
const READ_PIECE = 16 * 1024 * 1024;
/** Records decoded between two yields to the event loop. */
const DECODE_SLICE = 256;
const SNAPSHOT_WRITE_BATCH = 512;

/** The snapshot and log of one generation, open for reading rows back. */
export class GenerationFiles implements RecordSource {
  private readonly fds: [number, number];

  constructor(
    readonly dir: string,
    readonly generation: number,
  ) {
    const snapshot = openSync(join(dir, snapshotName(generation)), 'r');
    try {
      this.fds = [snapshot, openSync(join(dir, logName(generation)), 'r')];
    } catch (e) {
      closeSync(snapshot);
      throw e;
    }
  }

  fd(file: number): number {
    return this.fds[file]!;
  }

  read(file: number, offset: number, length: number, into: Uint8Array): void {
    let done = 0;
    while (done < length) {
      const n = readSync(this.fds[file]!, into, done, length - done, offset + done);
      // Rows point only at bytes already written; running short means the file was cut under us.
      if (n === 0) throw new CorruptIndexError(`index file ended early at byte ${offset + done}`);
      done += n;
    }
  }

  close(): void {
    for (const fd of this.fds) closeSync(fd);
  }
}

/**
 * Applies the whole frames of `fd` between `start` and `end`, a piece at a time and
 * yielding to the event loop every DECODE_SLICE records; returns the offset after the last
 * whole frame (an incomplete one at the end is left for later).
 */
export async function decodeFile(
  fd: number,
  start: number,
  end: number,
  dimension: number,
  apply: (record: DecodedRecord, base: number) => void,
): Promise<number> {
  let offset = start;
  let piece = Buffer.allocUnsafe(Math.min(READ_PIECE, Math.max(0, end - start)));
  while (offset < end) {
    const want = Math.min(piece.length, end - offset);
    const got = readSync(fd, piece, 0, want, offset);
    if (got === 0) break;
    const buf = piece.subarray(0, got);
    let used = 0;
    for (;;) {
      let decoded = 0;
      const base = offset + used;
      used += decodeRecords(
        buf.subarray(used),
        dimension,
        (record) => {
          decoded++;
          apply(record, base);
        },
        DECODE_SLICE,
      );
      if (decoded < DECODE_SLICE) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (used === 0) {
      // One frame larger than the piece: read it whole next time, or stop at a torn end.
      if (got < want || piece.length >= end - offset) break;
      piece = Buffer.allocUnsafe(Math.min(piece.length * 2, end - offset));
      continue;
    }
    offset += used;
  }
  return offset;
}

/**
 * Writes every row of `table` (with its current file hash and lines) as the snapshot of
 * `generation`, read back from the current files, and returns where each slot's record now is.
 */
export function writeSnapshot(dir: string, generation: number, table: VectorTable, source: RecordSource): Map<number, RecordLocation> {
  const fd = openSync(join(dir, snapshotName(generation)), 'w');
  const locations = new Map<number, RecordLocation>();
  let bytes = 0;
  try {
    let batch: LogRecord[] = [];
    let slots: number[] = [];
    const flush = () => {
      const buf = encodeRecords(batch, table.dimension);
      upsertSpans(buf).forEach((span, i) => locations.set(slots[i]!, { file: SNAPSHOT, jsonOffset: bytes + span.jsonOffset, jsonLength: span.jsonLength }));
      writeSync(fd, buf);
      bytes += buf.length;
      batch = [];
      slots = [];
    };
    for (const slot of table.slots()) {
      const { id, payload } = table.record(slot, source);
      batch.push({ op: 'upsert', id, payload, vector: table.vector(slot, source) });
      slots.push(slot);
      if (batch.length === SNAPSHOT_WRITE_BATCH) flush();
    }
    flush();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return locations;
}

export function readMeta(path: string): Meta {
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
    !Number.isInteger(meta.generation) ||
    (meta.snapshotRows !== undefined && !(Number.isInteger(meta.snapshotRows) && meta.snapshotRows >= 0))
  ) {
    throw new CorruptIndexError(`unreadable ${path}`);
  }
  return meta as Meta;
}

/** Replaced atomically: readers see the old or the new meta.json, never half of one. */
export function writeMeta(dir: string, meta: Meta): void {
  const tmp = join(dir, `meta.json.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(meta));
  renameSync(tmp, join(dir, 'meta.json'));
}

export const isMissingFile = (e: unknown): boolean => (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';

import { endianness } from 'node:os';
import { crc32 } from 'node:zlib';
import type { ChunkPayload, ChunkPlacement } from './vector-store.port';

/**
 * The embedded index's file format: a sequence of frames, each
 *   u32 body length | u32 CRC-32 of the body | body = u8 op, u32 JSON length, JSON, [vector]
 * with the vector as little-endian float32 (upserts only). Snapshots hold upserts; logs
 * append any op. A frame is written with one write call, so a reader that finds fewer bytes
 * than a frame announces stops there and reads the rest once it has been written.
 */
export type LogRecord =
  | { readonly op: 'upsert'; readonly id: string; readonly payload: ChunkPayload; readonly vector: Float32Array }
  | { readonly op: 'delete'; readonly ids: readonly string[] }
  | { readonly op: 'place'; readonly fileHash: string; readonly placements: readonly ChunkPlacement[] };

/**
 * As decoded. An upsert's vector is handed over as the bytes in the buffer, with where its
 * JSON sits in it (the vector follows the JSON), so the table can read both back from the
 * file later. A `place` written before chunks could move has no lines.
 */
export type DecodedRecord =
  | {
      readonly op: 'upsert';
      readonly id: string;
      readonly payload: ChunkPayload;
      readonly vectorBytes: Uint8Array;
      /** Offsets in the decoded buffer. */
      readonly jsonOffset: number;
      readonly jsonLength: number;
    }
  | { readonly op: 'delete'; readonly ids: readonly string[] }
  | { readonly op: 'place'; readonly fileHash: string; readonly ids: readonly string[]; readonly lines: readonly number[] | null };

/** Op 3 first only relabelled a file's hash; it now also carries each chunk's lines. */
const OPS = { upsert: 1, delete: 2, place: 3 } as const;
const HEADER = 8;
/** Bytes of a frame body before its JSON: op and JSON length. */
const BODY_PREFIX = 5;

/** The upsert document as stored; `p` is the payload. */
export interface UpsertDoc {
  readonly id: string;
  readonly p: ChunkPayload;
}

export class CorruptIndexError extends Error {}

export function encodeRecords(records: readonly LogRecord[], dimension: number): Buffer {
  const docs = records.map((record) => {
    if (record.op === 'upsert' && record.vector.length !== dimension) {
      throw new RangeError(`vector of dimension ${record.vector.length}, expected ${dimension}`);
    }
    return Buffer.from(
      JSON.stringify(
        record.op === 'upsert'
          ? ({ id: record.id, p: record.payload } satisfies UpsertDoc)
          : record.op === 'delete'
            ? { ids: record.ids }
            : { ids: record.placements.map((p) => p.id), h: record.fileHash, l: record.placements.flatMap((p) => [p.startLine, p.endLine]) },
      ),
      'utf8',
    );
  });
  const vectorBytes = dimension * 4;
  let total = 0;
  records.forEach((r, i) => (total += HEADER + BODY_PREFIX + docs[i]!.length + (r.op === 'upsert' ? vectorBytes : 0)));
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  records.forEach((record, i) => {
    const json = docs[i]!;
    const length = BODY_PREFIX + json.length + (record.op === 'upsert' ? vectorBytes : 0);
    const body = out.subarray(offset + HEADER, offset + HEADER + length);
    body.writeUInt8(OPS[record.op], 0);
    body.writeUInt32LE(json.length, 1);
    json.copy(body, BODY_PREFIX);
    if (record.op === 'upsert') {
      // Float32Array memory is little-endian on every host this runs on (see assertLittleEndian).
      const v = record.vector;
      body.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), BODY_PREFIX + json.length);
    }
    out.writeUInt32LE(length, offset);
    out.writeUInt32LE(crc32(body), offset + 4);
    offset += HEADER + length;
  });
  return out;
}

/** Where each upsert's JSON sits in a buffer of whole frames (as encodeRecords wrote it), in order. */
export function upsertSpans(buf: Buffer): { jsonOffset: number; jsonLength: number }[] {
  const spans: { jsonOffset: number; jsonLength: number }[] = [];
  for (let offset = 0; offset < buf.length; ) {
    const length = buf.readUInt32LE(offset);
    if (buf.readUInt8(offset + HEADER) === OPS.upsert) {
      spans.push({ jsonOffset: offset + HEADER + BODY_PREFIX, jsonLength: buf.readUInt32LE(offset + HEADER + 1) });
    }
    offset += HEADER + length;
  }
  return spans;
}

/**
 * Calls `apply` for every whole frame in `buf` (at most `maxRecords` of them) and returns
 * how many bytes they took; an incomplete frame at the end is left for later. A damaged
 * frame throws CorruptIndexError.
 */
export function decodeRecords(
  buf: Buffer,
  dimension: number,
  apply: (record: DecodedRecord) => void,
  maxRecords = Number.POSITIVE_INFINITY,
): number {
  let offset = 0;
  for (let decoded = 0; decoded < maxRecords && buf.length - offset >= HEADER; decoded++) {
    const length = buf.readUInt32LE(offset);
    if (buf.length - offset - HEADER < length) break;
    const body = buf.subarray(offset + HEADER, offset + HEADER + length);
    if (crc32(body) !== buf.readUInt32LE(offset + 4) || length < BODY_PREFIX) throw new CorruptIndexError(`damaged frame at byte ${offset}`);
    const op = body.readUInt8(0);
    const jsonLength = body.readUInt32LE(1);
    if (BODY_PREFIX + jsonLength > length) throw new CorruptIndexError(`damaged frame at byte ${offset}`);
    const doc = JSON.parse(body.toString('utf8', BODY_PREFIX, BODY_PREFIX + jsonLength)) as { id?: string; p?: ChunkPayload; ids?: string[]; h?: string; l?: unknown };
    if (op === OPS.upsert && doc.id !== undefined && doc.p !== undefined && length === BODY_PREFIX + jsonLength + dimension * 4) {
      const jsonOffset = offset + HEADER + BODY_PREFIX;
      apply({
        op: 'upsert',
        id: doc.id,
        payload: doc.p,
        vectorBytes: body.subarray(BODY_PREFIX + jsonLength),
        jsonOffset,
        jsonLength,
      });
    } else if (op === OPS.delete && Array.isArray(doc.ids)) {
      apply({ op: 'delete', ids: doc.ids });
    } else if (op === OPS.place && Array.isArray(doc.ids) && typeof doc.h === 'string') {
      const lines = Array.isArray(doc.l) && doc.l.length === doc.ids.length * 2 ? (doc.l as number[]) : null;
      apply({ op: 'place', ids: doc.ids, fileHash: doc.h, lines });
    } else {
      throw new CorruptIndexError(`unexpected frame (op ${op}) at byte ${offset}`);
    }
    offset += HEADER + length;
  }
  return offset;
}

/** The files store vectors as the host's float32 bytes; refuse a big-endian host rather than misread them. */
/** The payload of an upsert document read back from a file. */
export function parseUpsertDoc(json: Buffer): UpsertDoc {
  const doc = JSON.parse(json.toString('utf8')) as Partial<UpsertDoc>;
  if (typeof doc.id !== 'string' || !doc.p) throw new CorruptIndexError('unreadable chunk record');
  return doc as UpsertDoc;
}

export function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('the embedded vector index needs a little-endian host');
}

import { endianness } from 'node:os';
import { crc32 } from 'node:zlib';
import type { ChunkPayload } from './vector-store.port';

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
  | { readonly op: 'file-hash'; readonly ids: readonly string[]; readonly fileHash: string };

/** As decoded: an upsert's vector is handed over as the bytes in the file. */
export type DecodedRecord =
  | { readonly op: 'upsert'; readonly id: string; readonly payload: ChunkPayload; readonly vectorBytes: Uint8Array }
  | Exclude<LogRecord, { op: 'upsert' }>;

const OPS = { upsert: 1, delete: 2, 'file-hash': 3 } as const;
const HEADER = 8;

export class CorruptIndexError extends Error {}

export function encodeRecords(records: readonly LogRecord[], dimension: number): Buffer {
  const docs = records.map((record) => {
    if (record.op === 'upsert' && record.vector.length !== dimension) {
      throw new RangeError(`vector of dimension ${record.vector.length}, expected ${dimension}`);
    }
    return Buffer.from(
      JSON.stringify(
        record.op === 'upsert'
          ? { id: record.id, p: record.payload }
          : record.op === 'delete'
            ? { ids: record.ids }
            : { ids: record.ids, h: record.fileHash },
      ),
      'utf8',
    );
  });
  const vectorBytes = dimension * 4;
  let total = 0;
  records.forEach((r, i) => (total += HEADER + 5 + docs[i].length + (r.op === 'upsert' ? vectorBytes : 0)));
  const out = Buffer.allocUnsafe(total);
  let offset = 0;
  records.forEach((record, i) => {
    const json = docs[i];
    const length = 5 + json.length + (record.op === 'upsert' ? vectorBytes : 0);
    const body = out.subarray(offset + HEADER, offset + HEADER + length);
    body.writeUInt8(OPS[record.op], 0);
    body.writeUInt32LE(json.length, 1);
    json.copy(body, 5);
    if (record.op === 'upsert') {
      // Float32Array memory is little-endian on every host this runs on (see assertLittleEndian).
      const v = record.vector;
      body.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), 5 + json.length);
    }
    out.writeUInt32LE(length, offset);
    out.writeUInt32LE(crc32(body), offset + 4);
    offset += HEADER + length;
  });
  return out;
}

/** How many upserts a buffer of frames holds, from the frame headers alone (to size a table). */
export function countUpserts(buf: Buffer): number {
  let count = 0;
  for (let offset = 0; buf.length - offset >= HEADER + 1; ) {
    const length = buf.readUInt32LE(offset);
    if (buf.length - offset - HEADER < length) break;
    if (buf.readUInt8(offset + HEADER) === OPS.upsert) count++;
    offset += HEADER + length;
  }
  return count;
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
    if (crc32(body) !== buf.readUInt32LE(offset + 4) || length < 5) throw new CorruptIndexError(`damaged frame at byte ${offset}`);
    const op = body.readUInt8(0);
    const jsonLength = body.readUInt32LE(1);
    if (5 + jsonLength > length) throw new CorruptIndexError(`damaged frame at byte ${offset}`);
    const doc = JSON.parse(body.toString('utf8', 5, 5 + jsonLength)) as { id?: string; p?: ChunkPayload; ids?: string[]; h?: string };
    if (op === OPS.upsert && doc.id !== undefined && doc.p !== undefined && length === 5 + jsonLength + dimension * 4) {
      apply({ op: 'upsert', id: doc.id, payload: doc.p, vectorBytes: body.subarray(5 + jsonLength) });
    } else if (op === OPS.delete && Array.isArray(doc.ids)) {
      apply({ op: 'delete', ids: doc.ids });
    } else if (op === OPS['file-hash'] && Array.isArray(doc.ids) && typeof doc.h === 'string') {
      apply({ op: 'file-hash', ids: doc.ids, fileHash: doc.h });
    } else {
      throw new CorruptIndexError(`unexpected frame (op ${op}) at byte ${offset}`);
    }
    offset += HEADER + length;
  }
  return offset;
}

/** The files store vectors as the host's float32 bytes; refuse a big-endian host rather than misread them. */
export function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('the embedded vector index needs a little-endian host');
}

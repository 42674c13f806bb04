import { decodeRecords, encodeRecords, type LogRecord } from '../../src/retrieval/vector-log';
import type { ChunkFilter, ChunkPayload, ChunkPlacement, ScoredChunk } from '../../src/retrieval/vector-store.port';
import { unitCopy, VectorTable, type RecordSource } from '../../src/retrieval/vector-table';

/** A VectorTable over an in-memory "log file", fed the way the embedded store feeds it: encoded frames, decoded. */
export class MemoryTable {
  readonly table: VectorTable;
  private log = Buffer.alloc(0);
  private readonly source: RecordSource = {
    read: (_file, offset, length, into) => into.set(this.log.subarray(offset, offset + length)),
  };

  constructor(readonly dimension: number) {
    this.table = new VectorTable(dimension);
  }

  write(records: readonly LogRecord[]): void {
    const buf = encodeRecords(records, this.dimension);
    const base = this.log.length;
    this.log = Buffer.concat([this.log, buf]);
    decodeRecords(buf, this.dimension, (record) => this.table.apply(record, 1, base));
  }

  upsert(rows: readonly { id: string; vector: Float32Array; payload: ChunkPayload }[]): void {
    this.write(rows.map((r) => ({ op: 'upsert', id: r.id, payload: r.payload, vector: unitCopy(r.vector) })));
  }

  remove(...ids: string[]): void {
    this.write([{ op: 'delete', ids }]);
  }

  place(fileHash: string, placements: readonly ChunkPlacement[]): void {
    this.write([{ op: 'place', fileHash, placements }]);
  }

  search(query: Float32Array, filter: ChunkFilter, limit: number): ScoredChunk[] {
    return this.table.search(query, filter, limit, this.source);
  }
}

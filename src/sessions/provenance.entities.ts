import { EntitySchema } from 'typeorm';
import { columnTypes, type Dialect } from '../persistence/dialect';

/**
 * Index rows answering "which turns were built on this code?" without scanning the turns'
 * JSON columns. Written by the turn lifecycle in the same transaction as the turn's refs.
 */
export interface TurnChunkRefRow {
  turnId: string;
  chunkId: string;
  sessionId: string;
  orgId: string;
  contentHash: string;
  /** The turn's creation date: the order provenance lists are read in. */
  creationDate: Date;
}

/** One row per distinct file version (SHA-256) a turn used: as an active file or through a retrieved chunk. */
export interface TurnFileRefRow {
  turnId: string;
  contentHash: string;
  sessionId: string;
  orgId: string;
  path: string;
  creationDate: Date;
}

/** Longest chunk id or hash the index holds; real ones (UUIDs, SHA-256 hex) are far shorter. */
export const MAX_REF_KEY = 128;
export const MAX_REF_PATH = 1024;

export function provenanceEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const str = (length: number, name: string, primary = false) => ({ type: 'varchar' as const, length, name, primary });
  /** Ids, chunk ids and hashes: compared byte for byte (see ColumnTypes.exactId). */
  const id = (length: number, name: string, primary = false) => ({ ...str(length, name, primary), ...t.exactId });
  const chunkRefs = new EntitySchema<TurnChunkRefRow>({
    name: 'TurnChunkRef',
    tableName: 'turn_chunk_refs',
    columns: {
      turnId: id(36, 'turn_id', true),
      chunkId: id(MAX_REF_KEY, 'chunk_id', true),
      sessionId: id(36, 'session_id'),
      orgId: id(64, 'org_id'),
      contentHash: id(MAX_REF_KEY, 'content_hash'),
      creationDate: { ...t.datetime, name: 'creation_date' },
    },
    indices: [{ name: 'idx_turn_chunk_refs_org_chunk', columns: ['orgId', 'chunkId', 'creationDate', 'turnId'] }],
  });
  const fileRefs = new EntitySchema<TurnFileRefRow>({
    name: 'TurnFileRef',
    tableName: 'turn_file_refs',
    columns: {
      turnId: id(36, 'turn_id', true),
      contentHash: id(MAX_REF_KEY, 'content_hash', true),
      sessionId: id(36, 'session_id'),
      orgId: id(64, 'org_id'),
      path: str(MAX_REF_PATH, 'path'),
      creationDate: { ...t.datetime, name: 'creation_date' },
    },
    indices: [{ name: 'idx_turn_file_refs_org_hash', columns: ['orgId', 'contentHash', 'creationDate', 'turnId'] }],
  });
  return { turnChunkRefs: chunkRefs, turnFileRefs: fileRefs };
}

export type ProvenanceEntities = ReturnType<typeof provenanceEntities>;

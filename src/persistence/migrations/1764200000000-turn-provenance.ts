import { Table, TableIndex, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Provenance indexes: which turns used a chunk (turn_chunk_refs) or a file version
 * (turn_file_refs), filled from the refs of turns that already exist.
 */
export class TurnProvenance1764200000000 implements MigrationInterface {
  name = 'TurnProvenance1764200000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const str = (name: string, length: number, isPrimary = false): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      isNullable: false,
      isPrimary,
    });
    const date: TableColumnOptions = {
      name: 'creation_date',
      type: String(t.datetime.type),
      ...(t.datetime.precision ? { precision: t.datetime.precision } : {}),
      isNullable: false,
    };
    await q.createTable(
      new Table({
        name: 'turn_chunk_refs',
        columns: [str('turn_id', 36, true), str('chunk_id', 128, true), str('session_id', 36), str('org_id', 64), str('content_hash', 128), date],
        indices: [
          new TableIndex({ name: 'idx_turn_chunk_refs_org_chunk', columnNames: ['org_id', 'chunk_id', 'creation_date', 'turn_id'] }),
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'turn_file_refs',
        columns: [str('turn_id', 36, true), str('content_hash', 128, true), str('session_id', 36), str('org_id', 64), str('path', 1024), date],
        indices: [
          new TableIndex({ name: 'idx_turn_file_refs_org_hash', columnNames: ['org_id', 'content_hash', 'creation_date', 'turn_id'] }),
        ],
      }),
    );
    await backfill(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('turn_file_refs');
    await q.dropTable('turn_chunk_refs');
  }
}

interface TurnRefsRow {
  id: string;
  session_id: string;
  org_id: string;
  creation_date: unknown;
  chunk_refs: string | null;
  active_file_refs: string | null;
}

/** Indexes the refs of existing turns, 500 turns at a time, with the rules the manager applies to new ones. */
async function backfill(q: QueryRunner): Promise<void> {
  let after = '';
  for (;;) {
    const turns = (await q.query(
      `SELECT id, session_id, org_id, creation_date, chunk_refs, active_file_refs FROM agent_session_turns
        WHERE id > ? AND (chunk_refs <> '[]' OR active_file_refs <> '[]') ORDER BY id LIMIT 500`,
      [after],
    )) as TurnRefsRow[];
    if (turns.length === 0) return;
    for (const turn of turns) {
      const chunks = new Map<string, string>();
      const files = new Map<string, string>();
      for (const f of parseList(turn.active_file_refs)) {
        if (fits(f.contentHash) && !files.has(f.contentHash)) files.set(f.contentHash, (typeof f.path === 'string' ? f.path : '').slice(0, 1024));
      }
      for (const c of parseList(turn.chunk_refs)) {
        if (fits(c.chunkId) && fits(c.contentHash) && !chunks.has(c.chunkId)) chunks.set(c.chunkId, c.contentHash);
        if (fits(c.fileContentHash) && !files.has(c.fileContentHash)) files.set(c.fileContentHash, (typeof c.path === 'string' ? c.path : '').slice(0, 1024));
      }
      for (const [chunkId, contentHash] of chunks) {
        await q.query(
          'INSERT INTO turn_chunk_refs (turn_id, chunk_id, session_id, org_id, content_hash, creation_date) VALUES (?, ?, ?, ?, ?, ?)',
          [turn.id, chunkId, turn.session_id, turn.org_id, contentHash, turn.creation_date],
        );
      }
      for (const [contentHash, path] of files) {
        await q.query(
          'INSERT INTO turn_file_refs (turn_id, content_hash, session_id, org_id, path, creation_date) VALUES (?, ?, ?, ?, ?, ?)',
          [turn.id, contentHash, turn.session_id, turn.org_id, path, turn.creation_date],
        );
      }
    }
    after = turns[turns.length - 1]!.id;
  }
}

type Ref = Record<string, unknown> & { path?: unknown; contentHash?: unknown; chunkId?: unknown; fileContentHash?: unknown };

function parseList(raw: string | null): Ref[] {
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((x): x is Ref => typeof x === 'object' && x !== null) : [];
  } catch {
    return [];
  }
}

const fits = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 128;

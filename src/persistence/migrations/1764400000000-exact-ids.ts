import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf, EXACT_ID_COLLATION } from '../dialect';

/** [column, varchar length, nullable] */
type IdColumn = readonly [string, number, boolean];

/**
 * Every column that holds an id (org, user, session, turn, context, workspace, conversation,
 * provider response), an idempotency key, a chunk id or a content hash, per table. Frozen
 * with this migration.
 */
const ID_COLUMNS: Readonly<Record<string, readonly IdColumn[]>> = {
  agent_sessions: [
    ['id', 36, false],
    ['org_id', 64, false],
    ['owner_user_id', 64, false],
    ['agent_context_id', 64, false],
    ['conversation_context_id', 64, true],
    ['workspace_id', 200, true],
  ],
  agent_session_turns: [
    ['id', 36, false],
    ['session_id', 36, false],
    ['org_id', 64, false],
    ['created_by_user_id', 64, false],
    ['conversation_id', 64, true],
    ['openai_response_id', 200, true],
    ['previous_openai_response_id', 200, true],
  ],
  agent_session_participants: [
    ['session_id', 36, false],
    ['user_id', 64, false],
    ['org_id', 64, false],
  ],
  turn_events: [
    ['org_id', 64, false],
    ['session_id', 36, false],
    ['turn_id', 36, false],
    ['created_by_user_id', 64, false],
  ],
  turn_chunk_refs: [
    ['turn_id', 36, false],
    ['chunk_id', 128, false],
    ['session_id', 36, false],
    ['org_id', 64, false],
    ['content_hash', 128, false],
  ],
  turn_file_refs: [
    ['turn_id', 36, false],
    ['content_hash', 128, false],
    ['session_id', 36, false],
    ['org_id', 64, false],
  ],
  idempotency_keys: [
    ['org_id', 64, false],
    ['user_id', 64, false],
    ['idem_key', 200, false],
    ['session_id', 36, true],
    ['turn_id', 36, true],
  ],
  agent_contexts: [
    ['id', 64, false],
    ['org_id', 64, false],
  ],
  conversation_contexts: [
    ['id', 64, false],
    ['org_id', 64, false],
  ],
};

/**
 * Issue 8: on MySQL/MariaDB ids were compared case- and trailing-space-insensitively (the
 * table default `*_ci` collation), so a token for org `ACME` or `acme ` read acme's data.
 * Ids now use the server's NO PAD binary collation; the data is kept (ALTER ... MODIFY, one
 * rebuild per table). SQLite compares bytes already: nothing to do there.
 *
 * `down` returns the columns to the table default; it fails if ids that differ only in case
 * or trailing spaces were written meanwhile (the old collation cannot hold both).
 */
export class ExactIds1764400000000 implements MigrationInterface {
  name = 'ExactIds1764400000000';

  async up(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    if (dialect === 'sqlite') return;
    await this.modify(q, `CHARACTER SET utf8mb4 COLLATE ${EXACT_ID_COLLATION[dialect]}`);
  }

  async down(q: QueryRunner): Promise<void> {
    if (dialectOf(q.connection.options.type) === 'sqlite') return;
    await this.modify(q, '');
  }

  private async modify(q: QueryRunner, collation: string): Promise<void> {
    for (const [table, columns] of Object.entries(ID_COLUMNS)) {
      const clauses = columns.map(
        ([name, length, nullable]) => `MODIFY \`${name}\` varchar(${length}) ${collation} ${nullable ? 'NULL' : 'NOT NULL'}`,
      );
      await q.query(`ALTER TABLE \`${table}\` ${clauses.join(', ')}`);
    }
  }
}

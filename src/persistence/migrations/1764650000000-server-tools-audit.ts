import type { MigrationInterface, QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 10 (server tools, audit trail, honest usage): every tool call of a turn and the
 * files its server tools wrote (JSON documents, like the turn's other refs), the model the
 * provider says answered, and cached input tokens on turns and session totals.
 *
 * Plain ADD COLUMN on both dialects: TypeORM's addColumn rebuilds a SQLite table, and the
 * rebuild would drop the NOCASE collation of session names.
 */
export class ServerToolsAudit1764650000000 implements MigrationInterface {
  name = 'ServerToolsAudit1764650000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const integer = String(t.integer);
    for (const [table, column, type] of [
      ['agent_session_turns', 'tool_call_records', `${String(t.longText)} NULL`],
      ['agent_session_turns', 'output_files', `${String(t.longText)} NULL`],
      ['agent_session_turns', 'answered_by_model', 'varchar(100) NULL'],
      ['agent_session_turns', 'cached_input_tokens', `${integer} NULL`],
      ['agent_sessions', 'cached_input_tokens', 'bigint NOT NULL DEFAULT (0)'],
    ] as const) {
      await q.query(`ALTER TABLE ${q.connection.driver.escape(table)} ADD COLUMN ${q.connection.driver.escape(column)} ${type}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, column] of [
      ['agent_sessions', 'cached_input_tokens'],
      ['agent_session_turns', 'cached_input_tokens'],
      ['agent_session_turns', 'answered_by_model'],
      ['agent_session_turns', 'output_files'],
      ['agent_session_turns', 'tool_call_records'],
    ] as const) {
      await q.query(`ALTER TABLE ${q.connection.driver.escape(table)} DROP COLUMN ${q.connection.driver.escape(column)}`);
    }
  }
}

import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 10 (server tools, audit trail, honest usage): every tool call of a turn and the
 * files its server tools wrote (JSON documents, like the turn's other refs), the model the
 * provider says answered, and cached input tokens on turns and session totals.
 */
export class ServerToolsAudit1764650000000 implements MigrationInterface {
  name = 'ServerToolsAudit1764650000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const json = (name: string) => new TableColumn({ name, type: String(t.longText), isNullable: true });
    await q.addColumns('agent_session_turns', [
      json('tool_call_records'),
      json('output_files'),
      new TableColumn({ name: 'answered_by_model', type: 'varchar', length: '100', isNullable: true }),
      new TableColumn({ name: 'cached_input_tokens', type: String(t.integer), isNullable: true }),
    ]);
    await q.addColumns('agent_sessions', [new TableColumn({ name: 'cached_input_tokens', type: 'bigint', default: '0', isNullable: false })]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('agent_sessions', 'cached_input_tokens');
    for (const name of ['cached_input_tokens', 'answered_by_model', 'output_files', 'tool_call_records']) {
      await q.dropColumn('agent_session_turns', name);
    }
  }
}

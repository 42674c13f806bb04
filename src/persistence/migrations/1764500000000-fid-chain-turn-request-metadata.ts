import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 10: why a turn's provider chain started (null when it continued one), and the
 * request metadata stored with a turn (retrieval scope, snippets left out). Existing turns
 * keep nulls, which read as "continued" and "no metadata".
 */
export class FidChainTurnRequestMetadata1764500000000 implements MigrationInterface {
  name = 'FidChainTurnRequestMetadata1764500000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    await q.addColumns('agent_session_turns', [
      new TableColumn({ name: 'openai_chain_restart_reason', type: 'varchar', length: '32', isNullable: true }),
      new TableColumn({ name: 'request_metadata', type: String(t.longText), isNullable: true }),
    ]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('agent_session_turns', 'request_metadata');
    await q.dropColumn('agent_session_turns', 'openai_chain_restart_reason');
  }
}

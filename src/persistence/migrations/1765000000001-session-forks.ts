import { Table, TableIndex, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 39: forking a session at a turn. Lineage lives beside the sessions and turns (a fork's
 * origin and the usage its copied turns were charged elsewhere; which turns are copies), so
 * the session and turn rows, and every statement that writes them, stay as they are.
 */
export class SessionForks1765000000001 implements MigrationInterface {
  name = 'SessionForks1765000000001';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const id = (name: string, length: number): TableColumnOptions => ({ name, type: 'varchar', length: String(length), isNullable: false, ...t.exactId });
    const bigint = (name: string): TableColumnOptions => ({ name, type: 'bigint', isNullable: false, default: '0' });
    await q.createTable(
      new Table({
        name: 'agent_session_forks',
        columns: [
          { ...id('session_id', 36), isPrimary: true },
          id('org_id', 64),
          id('source_session_id', 36),
          id('source_turn_id', 36),
          { name: 'created_date', type: String(t.datetime.type), ...(t.datetime.precision ? { precision: t.datetime.precision } : {}), isNullable: false },
          bigint('inherited_input_tokens'),
          bigint('inherited_output_tokens'),
          bigint('inherited_cached_input_tokens'),
          { name: 'inherited_cost_usd', type: String(t.double), isNullable: true },
          { name: 'inherited_usage_estimated', type: 'boolean', default: '0', isNullable: false },
        ],
        indices: [new TableIndex({ name: 'idx_session_forks_source', columnNames: ['org_id', 'source_session_id', 'created_date', 'session_id'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'agent_session_turn_copies',
        columns: [{ ...id('turn_id', 36), isPrimary: true }, id('org_id', 64), id('session_id', 36), id('source_session_id', 36), id('source_turn_id', 36)],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('agent_session_turn_copies');
    await q.dropTable('agent_session_forks');
  }
}

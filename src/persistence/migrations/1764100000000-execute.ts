import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/** Idempotency keys for execute (issue 3): caller-scoped key -> input fingerprint and outcome. */
export class Execute1764100000000 implements MigrationInterface {
  name = 'Execute1764100000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const date = (name: string) => ({
      name,
      type: String(t.datetime.type),
      ...(t.datetime.precision ? { precision: t.datetime.precision } : {}),
      isNullable: false,
    });
    const str = (name: string, length: number, isNullable = false) => ({ name, type: 'varchar', length: String(length), isNullable });
    await q.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          { ...str('org_id', 64), isPrimary: true },
          { ...str('user_id', 64), isPrimary: true },
          { ...str('idem_key', 200), isPrimary: true },
          str('input_hash', 64),
          str('state', 16),
          { name: 'outcome', type: String(t.longText), isNullable: true },
          str('session_id', 36, true),
          str('turn_id', 36, true),
          date('created_date'),
          date('expires_at'),
        ],
        indices: [new TableIndex({ name: 'idx_idempotency_expires', columnNames: ['expires_at'] })],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('idempotency_keys');
  }
}

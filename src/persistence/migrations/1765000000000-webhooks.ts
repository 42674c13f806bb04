import { Table, TableIndex, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 39: webhook endpoints per org, and the outbox of their deliveries (written in the
 * transaction of the turn change that causes them, sent by any instance).
 */
export class Webhooks1765000000000 implements MigrationInterface {
  name = 'Webhooks1765000000000';

  async up(q: QueryRunner): Promise<void> {
    const t = columnTypes(dialectOf(q.connection.options.type));
    const str = (name: string, length: number, isNullable = false): TableColumnOptions => ({ name, type: 'varchar', length: String(length), isNullable });
    const id = (name: string, length: number, isNullable = false): TableColumnOptions => ({ ...str(name, length, isNullable), ...t.exactId });
    const date = (name: string, isNullable = false): TableColumnOptions => ({
      name,
      type: String(t.datetime.type),
      ...(t.datetime.precision ? { precision: t.datetime.precision } : {}),
      isNullable,
    });
    const int = (name: string, def?: string): TableColumnOptions => ({ name, type: String(t.integer), isNullable: false, ...(def === undefined ? {} : { default: def }) });
    const long = (name: string): TableColumnOptions => ({ name, type: String(t.longText), isNullable: false });

    await q.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          { ...id('id', 36), isPrimary: true },
          id('org_id', 64),
          str('url', 2048),
          str('description', 500, true),
          int('event_mask'),
          { name: 'enabled', type: 'boolean', default: '1', isNullable: false },
          str('disabled_reason', 200, true),
          str('secret', 100),
          str('previous_secret', 100, true),
          date('previous_secret_expires_at', true),
          id('created_by_user_id', 64),
          date('created_date'),
          date('updated_date'),
        ],
        indices: [new TableIndex({ name: 'idx_webhook_endpoints_org', columnNames: ['org_id', 'created_date', 'id'] })],
      }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          { ...id('id', 36), isPrimary: true },
          id('webhook_id', 40),
          id('endpoint_id', 36),
          id('org_id', 64),
          str('event_type', 40),
          id('session_id', 36, true),
          id('turn_id', 36, true),
          long('payload'),
          str('status', 16),
          long('attempts'),
          int('attempt_count', '0'),
          date('next_attempt_at', true),
          str('lease_owner', 64, true),
          date('retry_until'),
          date('created_date'),
        ],
        indices: [
          new TableIndex({ name: 'idx_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] }),
          new TableIndex({ name: 'idx_webhook_deliveries_endpoint', columnNames: ['endpoint_id', 'created_date', 'id'] }),
          new TableIndex({ name: 'idx_webhook_deliveries_created', columnNames: ['created_date'] }),
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('webhook_deliveries');
    await q.dropTable('webhook_endpoints');
  }
}

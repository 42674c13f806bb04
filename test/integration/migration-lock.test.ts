import { openGatewayDatabase, type GatewayDatabase } from '../../src/gateway-database';
import { createLogger } from '../../src/logger';
import { migrations } from '../../src/persistence/migrations';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';

/**
 * Instances of a deployment often start together (a rollout, a restart of every pod): on a
 * fresh database each must not try to create the same tables at once ("Table ... already exists").
 */
describeWithMysql('migrations of instances starting at once on MySQL/MariaDB', () => {
  it('run once, while every instance waits for them and then opens the database', async () => {
    const url = await createMysqlDatabase();
    const opened: GatewayDatabase[] = [];
    try {
      const open = () =>
        openGatewayDatabase({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 2, logger: createLogger('silent') }).then((db) => {
          opened.push(db);
          return db;
        });
      const results = await Promise.allSettled([open(), open(), open(), open()]);
      expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'opened'))).toEqual(['opened', 'opened', 'opened', 'opened']);
      const rows = (await opened[0]!.dataSource.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[];
      expect(rows.map((r) => r.name)).toEqual(migrations.map((m) => m.name));
    } finally {
      await Promise.all(opened.map((db) => db.close()));
      await dropMysqlDatabase(url);
    }
  }, 120_000);
});

import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';

function migrationSuite(open: TestDatabaseFactory): void {
  it('leaves nothing for the entities to change after all migrations ran', async () => {
    const t = await open();
    try {
      const pending = await t.db.dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await t.dispose();
    }
  });

  it('runs every migration down and up again', async () => {
    const t = await open();
    try {
      const count = t.db.dataSource.migrations.length;
      for (let i = 0; i < count; i++) await t.db.dataSource.undoLastMigration();
      expect(await t.db.dataSource.showMigrations()).toBe(true);
      await t.db.dataSource.runMigrations();
      const pending = await t.db.dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries).toEqual([]);
    } finally {
      await t.dispose();
    }
  });
}

describe('migrations on embedded SQLite', () => migrationSuite(sqliteTestDatabase));
describeWithMysql('migrations on MySQL/MariaDB', () => migrationSuite(mysqlTestDatabase));

import { EXACT_ID_COLLATION } from '../../src/persistence/dialect';
import { migrations } from '../../src/persistence/migrations';
import { ExactIds1764400000000 } from '../../src/persistence/migrations/1764400000000-exact-ids';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';

interface ColumnCollation {
  TABLE_NAME: string;
  COLUMN_NAME: string;
  COLLATION_NAME: string | null;
  TABLE_COLLATION: string;
}

/** Each text column's collation on the server, as `table.column`. */
async function collations(t: TestDatabase): Promise<Map<string, ColumnCollation>> {
  const rows = (await t.db.dataSource.query(
    `SELECT c.TABLE_NAME, c.COLUMN_NAME, c.COLLATION_NAME, tb.TABLE_COLLATION
       FROM information_schema.COLUMNS c JOIN information_schema.TABLES tb
         ON tb.TABLE_SCHEMA = c.TABLE_SCHEMA AND tb.TABLE_NAME = c.TABLE_NAME
      WHERE c.TABLE_SCHEMA = DATABASE() AND c.COLLATION_NAME IS NOT NULL`,
  )) as ColumnCollation[];
  return new Map(rows.map((r) => [`${r.TABLE_NAME}.${r.COLUMN_NAME}`, r]));
}

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

/** TypeORM's schema diff ignores collations on MySQL, so the entities' collations are compared here. */
describeWithMysql('id collations on MySQL/MariaDB', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await mysqlTestDatabase();
  });
  afterAll(() => t.dispose());

  it('gives every column the collation its entity declares, and the table default where it declares none', async () => {
    const onServer = await collations(t);
    const checked: string[] = [];
    for (const entity of t.db.dataSource.entityMetadatas) {
      for (const column of entity.columns) {
        const actual = onServer.get(`${entity.tableName}.${column.databaseName}`);
        if (!actual) continue;
        checked.push(`${entity.tableName}.${column.databaseName}`);
        expect(`${entity.tableName}.${column.databaseName} ${actual.COLLATION_NAME}`).toBe(
          `${entity.tableName}.${column.databaseName} ${column.collation ?? actual.TABLE_COLLATION}`,
        );
      }
    }
    expect(checked.length).toBeGreaterThan(40);
  });

  it('compares every id column byte for byte (NO PAD binary) and keeps session names case-insensitive', async () => {
    const exact = EXACT_ID_COLLATION[t.db.dialect as 'mysql' | 'mariadb'];
    const onServer = [...(await collations(t)).values()];
    const ids = onServer.filter((c) => c.COLUMN_NAME === 'id' || c.COLUMN_NAME.endsWith('_id') || c.COLUMN_NAME === 'idem_key');
    expect(ids.length).toBeGreaterThan(30);
    expect(ids.filter((c) => c.COLLATION_NAME !== exact).map((c) => `${c.TABLE_NAME}.${c.COLUMN_NAME}`)).toEqual([]);
    const [padding] = (await t.db.dataSource.query(
      `SELECT COUNT(*) AS n FROM agent_sessions WHERE org_id = 'acme ' OR org_id = 'ACME'`,
    )) as { n: number }[];
    expect(Number(padding?.n)).toBe(0);
    expect(onServer.find((c) => c.TABLE_NAME === 'agent_sessions' && c.COLUMN_NAME === 'name')?.COLLATION_NAME).toMatch(/_ci$/);
  });

  it('keeps existing rows when it changes the collation, and its down step restores the table default', async () => {
    const q = t.db.dataSource;
    // Undo the migrations after ExactIds too (newest first), then ExactIds itself.
    const later = migrations.length - 1 - migrations.indexOf(ExactIds1764400000000);
    for (let i = 0; i <= later; i++) await q.undoLastMigration();
    expect((await collations(t)).get('agent_sessions.org_id')?.COLLATION_NAME).toMatch(/_ci$/);
    const now = new Date();
    await q.query(
      `INSERT INTO agent_sessions (id, org_id, org_name, owner_user_id, owner_user_name, name, creation_date, last_updated_date, agent_context_id)
       VALUES ('s-1', 'acme', 'Acme', 'user-2', 'User 2', 'Kept', ?, ?, 'ac')`,
      [now, now],
    );
    expect(await q.query(`SELECT id FROM agent_sessions WHERE org_id = 'ACME '`)).toHaveLength(1);
    await q.runMigrations();
    expect(await q.query(`SELECT id, name FROM agent_sessions WHERE org_id = 'acme' AND owner_user_id = 'user-2'`)).toEqual([{ id: 's-1', name: 'Kept' }]);
    expect(await q.query(`SELECT id FROM agent_sessions WHERE org_id = 'ACME ' OR org_id = 'acme ' OR owner_user_id = 'USER-2'`)).toEqual([]);
  });
});

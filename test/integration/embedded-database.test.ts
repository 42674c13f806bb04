import { sqliteTestDatabase, type TestDatabase } from '../support/db';

describe('the embedded SQLite database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await sqliteTestDatabase();
  });
  afterAll(() => t.dispose());

  // better-sqlite3 reuses one query runner; a wrapper added per statement overflowed the stack near 10,300.
  it('keeps answering after many thousands of statements', async () => {
    for (let i = 0; i < 12_000; i++) await t.db.dataSource.query('SELECT 1');
    await expect(t.db.dataSource.query('SELECT 2 AS two')).resolves.toEqual([{ two: 2 }]);
  });
});

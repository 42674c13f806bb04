import { PAGE_CACHE_KIB } from '../../src/persistence/sqlite-page-cache';
import { sqliteTestDatabase, type TestDatabase } from '../support/db';

/**
 * The embedded database's connections keep the page caches sized for them (sqlite-page-cache.ts),
 * not better-sqlite3's 16 MB each: the writer's filled as the file grew (bench:soak).
 */
describe('the embedded SQLite page caches', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await sqliteTestDatabase();
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('are the sizes set for the writer and for the reader thread', async () => {
    expect(await t.db.dataSource.query('PRAGMA cache_size')).toEqual([{ cache_size: -PAGE_CACHE_KIB.writer }]);
    expect(await t.db.read('PRAGMA cache_size')).toEqual([{ cache_size: -PAGE_CACHE_KIB.reader }]);
  });
});

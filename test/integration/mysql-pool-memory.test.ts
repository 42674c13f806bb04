import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mysqlTestDatabase, type TestDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const heapUsed = (): number => {
  gc();
  return process.memoryUsage().heapUsed;
};

describeWithMysql('the MySQL/MariaDB connection pool', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await mysqlTestDatabase();
  });
  afterAll(() => t.dispose());

  // mysql2 by default gives every connection a 16,000-entry prepared-statement cache, allocated
  // up front (~520 KB each: ~10 MB for a pool of 20 the first time a burst fills it), though the
  // gateway never prepares a statement.
  it('costs well under 100 KB of heap per open connection', async () => {
    const before = heapUsed();
    const opened = t.db.poolUse()?.idle ?? 0;
    // Twenty transactions that each hold their connection for a moment open the whole pool.
    await Promise.all(Array.from({ length: 20 }, () => t.db.sqlTransaction((tx) => tx.rows('SELECT SLEEP(0.05) AS s'))));
    const use = t.db.poolUse();
    expect(use?.idle).toBe(20);
    const perConnection = (heapUsed() - before) / (20 - opened);
    expect(perConnection).toBeLessThan(100 * 1024);
  });
});

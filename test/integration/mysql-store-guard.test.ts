import { createPool, type Pool, type PoolConnection } from 'mysql2';
import { createLogger } from '../../src/logger';
import { StoreUnavailableError } from '../../src/persistence/db-errors';
import { MysqlStoreGuard } from '../../src/persistence/mysql-store-guard';
import { describeWithMysql, mysqlUrl } from '../support/services';

/**
 * The guard on a real pool, through the promise wrapper TypeORM runs every statement with:
 * the wrapper is one per connection (mysql2 would build one per statement), and statements
 * sent through it still have the guard's deadline.
 */
describeWithMysql('MysqlStoreGuard on TypeORM’s path (MariaDB)', () => {
  let pool: Pool;
  let guard: MysqlStoreGuard;
  let connection: PoolConnection;

  beforeAll(async () => {
    const url = mysqlUrl as string;
    pool = createPool({ uri: url, connectionLimit: 2 });
    guard = new MysqlStoreGuard({ url, connectTimeoutMs: 2_000, queryTimeoutMs: 300, logger: createLogger('silent') });
    guard.attach(pool);
    connection = await new Promise<PoolConnection>((resolve, reject) => pool.getConnection((err, c) => (err ? reject(err) : resolve(c))));
  });

  afterAll(async () => {
    guard.close();
    await new Promise<void>((resolve) => pool.end(() => resolve()));
  });

  it('hands out one promise wrapper per connection, which answers statements', async () => {
    const wrapper = connection.promise();
    expect(connection.promise()).toBe(wrapper);
    const [rows] = await wrapper.query('SELECT 1 + 1 AS two');
    expect(rows).toEqual([{ two: 2 }]);
  });

  it('still builds a wrapper of its own for a caller that brings its own Promise', () => {
    expect(connection.promise(Promise)).not.toBe(connection.promise());
  });

  it('keeps the statement deadline on statements sent through the wrapper', async () => {
    // SLEEP(3) would answer; past the 300 ms deadline the guard fails it instead.
    await expect(connection.promise().query('SELECT SLEEP(3)')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

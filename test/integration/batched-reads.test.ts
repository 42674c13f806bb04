import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';

/**
 * Database.read: reads asked for together (an execute's planner reads, or many executes' at
 * once) come back each with its own rows; on MySQL they share one round trip, and a read that
 * fails fails alone.
 */
function batchedReadsSuite(open: TestDatabaseFactory, database: 'sqlite' | 'mysql'): void {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await open();
  });
  afterAll(() => t.dispose());

  it('answers each read with its own rows, in one round trip on MySQL', async () => {
    t.statements.length = 0;
    const [one, two, none] = await Promise.all([
      t.db.read<{ n: number }>('SELECT ? AS n', [1]),
      t.db.read<{ s: string }>('SELECT ? AS s UNION ALL SELECT ?', ['a', 'b']),
      t.db.read<{ name: string }>('SELECT name FROM event_counters WHERE name = ?', ['no such counter']),
    ]);
    expect(one.map((r) => Number(r.n))).toEqual([1]);
    expect(two.map((r) => r.s)).toEqual(['a', 'b']);
    expect(none).toEqual([]);
    expect(t.statements).toHaveLength(database === 'mysql' ? 1 : 3);
  });

  it('fails only the read that failed; the others in its batch still get their rows', async () => {
    const [good, bad, later] = await Promise.allSettled([
      t.db.read<{ n: number }>('SELECT ? AS n', [1]),
      t.db.read('SELECT * FROM no_such_table WHERE id = ?', ['x']),
      t.db.read<{ n: number }>('SELECT ? AS n', [2]),
    ]);
    expect(good.status === 'fulfilled' && good.value.map((r) => Number(r.n))).toEqual([1]);
    expect(bad.status).toBe('rejected');
    expect(later.status === 'fulfilled' && later.value.map((r) => Number(r.n))).toEqual([2]);
  });
}

describe('batched reads on embedded SQLite', () => batchedReadsSuite(sqliteTestDatabase, 'sqlite'));
describeWithMysql('batched reads on MySQL/MariaDB', () => batchedReadsSuite(mysqlTestDatabase, 'mysql'));

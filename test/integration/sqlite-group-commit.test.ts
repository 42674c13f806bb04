import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sqliteTestDatabase, type TestDatabase } from '../support/db';

/**
 * The embedded database's writer: plain-statement transactions asked for together share one
 * COMMIT, each fails alone, and none is reported done before the shared COMMIT.
 */
describe('group commit on the embedded SQLite database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await sqliteTestDatabase();
    await t.db.dataSource.query('CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
  });
  afterAll(() => t.dispose());
  beforeEach(async () => {
    await t.db.dataSource.query('DELETE FROM notes');
    t.statements.length = 0;
  });

  const note = (id: string, fail = false) =>
    t.db.sqlTransaction(async (tx) => {
      await tx.commitWith([{ sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: [id, `body of ${id}`] }]);
      if (fail) throw new Error(`refused ${id}`);
      return id;
    });
  /** What another connection sees: only what has committed. */
  const committed = () => {
    const other = new BetterSqlite3(join(t.dataDir, 'gateway.sqlite'), { readonly: true });
    try {
      return (other.prepare('SELECT id FROM notes ORDER BY id').all() as { id: string }[]).map((r) => r.id);
    } finally {
      other.close();
    }
  };
  const count = (pattern: RegExp) => t.statements.filter((sql) => pattern.test(sql)).length;

  it('commits transactions asked for together once, each in its own savepoint but the first', async () => {
    expect(await Promise.all(['a', 'b', 'c'].map((id) => note(id)))).toEqual(['a', 'b', 'c']);
    expect(count(/^BEGIN/)).toBe(1);
    expect(count(/^COMMIT/)).toBe(1);
    expect(count(/^SAVEPOINT/)).toBe(2);
    expect(committed()).toEqual(['a', 'b', 'c']);
  });

  it('runs a transaction asked for alone as before: BEGIN, its statements, COMMIT', async () => {
    await note('solo');
    expect(t.statements).toEqual(['BEGIN TRANSACTION', 'INSERT INTO notes (id, body) VALUES (?, ?)', 'COMMIT']);
  });

  it('rolls back only the transaction that failed, first or later in the group', async () => {
    const results = await Promise.allSettled([note('first', true), note('second'), note('third', true), note('fourth')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toEqual(new Error('refused third'));
    expect(committed()).toEqual(['fourth', 'second']);
  });

  it('reports a transaction done only once its group has committed', async () => {
    const seen: string[][] = [];
    await Promise.all(['x', 'y'].map((id) => note(id).then(() => seen.push(committed()))));
    expect(seen).toEqual([
      ['x', 'y'],
      ['x', 'y'],
    ]);
  });

  it('lets an ORM transaction asked for meanwhile wait for the group to commit first', async () => {
    const order: string[] = [];
    await Promise.all([
      note('g1').then(() => order.push('g1')),
      t.db.transaction(async (em) => {
        order.push(`orm saw ${(await em.query<unknown[]>('SELECT id FROM notes')).length}`);
      }),
      note('g2').then(() => order.push('g2')),
    ]);
    expect(order).toEqual(['g1', 'orm saw 1', 'g2']);
    expect(committed()).toEqual(['g1', 'g2']);
  });

  it('commits what is still open when the database closes', async () => {
    const other = await sqliteTestDatabase();
    await other.db.dataSource.query('CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
    const pending = other.db.sqlTransaction((tx) => tx.commitWith([{ sql: 'INSERT INTO notes (id, body) VALUES (?, ?)', params: ['late', 'x'] }]));
    await other.db.close();
    await pending;
    const reopened = new BetterSqlite3(join(other.dataDir, 'gateway.sqlite'), { readonly: true });
    expect(reopened.prepare('SELECT id FROM notes').all()).toEqual([{ id: 'late' }]);
    reopened.close();
    await other.dispose().catch(() => undefined);
  });
});

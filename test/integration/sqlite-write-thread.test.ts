import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/logger';
import { StoreUnavailableError } from '../../src/persistence/db-errors';
import { StaleReadError } from '../../src/persistence/sql';
import { SqliteWriteThread, type BoundStatement } from '../../src/persistence/sqlite-write-thread';

const silent = createLogger('silent');

/** SqliteWriteThread: whole plain-statement transactions on a worker thread with a writing connection of its own. */
describe('the SQLite write thread', () => {
  let dir: string;
  let file: string;
  let other: Database.Database;
  let thread: SqliteWriteThread;
  let log: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-write-thread-'));
    file = join(dir, 'test.sqlite');
    other = new Database(file);
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE); CREATE TABLE c (name TEXT PRIMARY KEY, value INTEGER NOT NULL)');
    other.exec("INSERT INTO c (name, value) VALUES ('n', 0)");
    log = [];
    thread = new SqliteWriteThread(file, silent, (sql) => log.push(sql));
  });
  afterEach(async () => {
    await thread.close();
    if (other.open) other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (name: string): BoundStatement => ({ sql: 'INSERT INTO t (name) VALUES (?)', params: [name], guard: false });
  const names = () => (other.prepare('SELECT name FROM t ORDER BY id').all() as { name: string }[]).map((r) => r.name);

  it('answers each statement: the insert id, or the rows of one with RETURNING', async () => {
    const results = await thread.transact([
      insert('one'),
      insert('two'),
      { sql: "UPDATE c SET value = value + 1 WHERE name = 'n' RETURNING value", params: [], guard: false },
    ]);
    expect(results).toEqual([
      { rows: [], insertId: 1 },
      { rows: [], insertId: 2 },
      { rows: [{ value: 1 }], insertId: 0 },
    ]);
    expect(names()).toEqual(['one', 'two']);
    expect(log).toEqual(['BEGIN TRANSACTION', 'INSERT INTO t (name) VALUES (?)', 'INSERT INTO t (name) VALUES (?)', expect.stringMatching(/^UPDATE c/), 'COMMIT']);
  });

  it('commits the transactions of one event-loop turn together; a failing or stale one rolls back alone', async () => {
    const [a, duplicate, stale, b] = await Promise.allSettled([
      thread.transact([insert('a')]),
      thread.transact([insert('b-first'), insert('a')]),
      thread.transact([insert('never'), { sql: 'UPDATE t SET name = ? WHERE id = ?', params: ['x', 999], guard: true }]),
      thread.transact([insert('b')]),
    ]);
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(duplicate).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    expect(stale).toMatchObject({ status: 'rejected', reason: expect.any(StaleReadError) });
    expect(names()).toEqual(['a', 'b']);
    expect(log.filter((sql) => sql === 'BEGIN TRANSACTION')).toHaveLength(1);
    expect(log.filter((sql) => sql === 'SAVEPOINT member')).toHaveLength(4);
  });

  it('fails what was sent to a thread that died as unavailable, and starts another for the next transaction', async () => {
    await thread.transact([insert('before')]);
    const worker = (thread as unknown as { worker: Worker }).worker;
    const lost = thread.transact([insert('lost')]);
    void worker.terminate();
    await expect(lost).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(names()).toEqual(['before']);
    await thread.transact([insert('after')]);
    expect(names()).toEqual(['before', 'after']);
  });

  it('answers what was sent before close, and refuses transactions after it', async () => {
    const last = thread.transact([insert('last')]);
    await thread.close();
    await expect(last).resolves.toHaveLength(1);
    expect(names()).toEqual(['last']);
    await expect(thread.transact([insert('late')])).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

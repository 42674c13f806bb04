import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/logger';
import { StoreUnavailableError } from '../../src/persistence/db-errors';
import { SqliteReader } from '../../src/persistence/sqlite-reader';

const silent = createLogger('silent');

/**
 * SqliteReader: the embedded database's plain reads on a worker thread with its own
 * read-only connection, beside the main connection that writes (as Database wires them).
 */
describe('the SQLite reader thread', () => {
  let dir: string;
  let file: string;
  let main: Database.Database;
  let reader: SqliteReader;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-reader-'));
    file = join(dir, 'test.sqlite');
    main = new Database(file);
    main.pragma('journal_mode = WAL');
    main.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO t (name) VALUES ('one')");
    reader = new SqliteReader(file, silent);
  });
  afterEach(async () => {
    await reader.close();
    if (main.open) main.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const names = async () => ((await reader.read('SELECT name FROM t ORDER BY id', [])) as { name: string }[]).map((r) => r.name);

  it('sees every commit made before the read, and nothing of a transaction still open', async () => {
    expect(await names()).toEqual(['one']);
    main.prepare('INSERT INTO t (name) VALUES (?)').run('two');
    expect(await names()).toEqual(['one', 'two']);
    main.exec("BEGIN; INSERT INTO t (name) VALUES ('three')");
    expect(await names()).toEqual(['one', 'two']);
    main.exec('COMMIT');
    expect(await names()).toEqual(['one', 'two', 'three']);
  });

  it('binds parameters and answers reads sent together each with its own rows', async () => {
    main.exec("INSERT INTO t (name) VALUES ('two'), ('three')");
    const [a, b, c] = await Promise.all([
      reader.read('SELECT name FROM t WHERE id = ?', [1]),
      reader.read('SELECT name FROM t WHERE id = ?', [3]),
      reader.read('SELECT COUNT(*) AS n FROM t WHERE name <> ?', ['two']),
    ]);
    expect([a, b, c]).toEqual([[{ name: 'one' }], [{ name: 'three' }], [{ n: 2 }]]);
  });

  it('fails a wrong statement or a write with the SQLite error, changes nothing, and goes on reading', async () => {
    await expect(reader.read('SELECT * FROM no_such_table', [])).rejects.toThrow(/no such table/);
    await expect(reader.read("INSERT INTO t (name) VALUES ('sneaked')", [])).rejects.toThrow();
    await expect(reader.read("INSERT INTO t (name) VALUES ('sneaked') RETURNING id", [])).rejects.toMatchObject({ code: 'SQLITE_READONLY' });
    expect(await names()).toEqual(['one']);
    expect(main.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 1 });
  });

  it('answers the reads sent before close, then stops and refuses more', async () => {
    const sent = [names(), names(), names()];
    await reader.close();
    expect(await Promise.all(sent)).toEqual([['one'], ['one'], ['one']]);
    await expect(names()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('fails reads as the store being unavailable when its thread cannot open the database, and starts again on the next read', async () => {
    const elsewhere = new SqliteReader(join(dir, 'missing.sqlite'), silent);
    try {
      await expect(elsewhere.read('SELECT 1 AS n', [])).rejects.toBeInstanceOf(StoreUnavailableError);
      new Database(join(dir, 'missing.sqlite')).exec('CREATE TABLE m (n INTEGER); INSERT INTO m VALUES (7)');
      expect(await elsewhere.read('SELECT n FROM m', [])).toEqual([{ n: 7 }]);
    } finally {
      await elsewhere.close();
    }
  });
});

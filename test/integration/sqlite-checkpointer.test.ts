import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteBlobStore } from '../../src/blobs/sqlite.adapter';
import { createLogger } from '../../src/logger';
import { SqliteCheckpointer } from '../../src/persistence/sqlite-checkpointer';
import { sqliteTestDatabase } from '../support/db';
import { eventually } from '../support/testkit/stand-ins';
import { capturingLogger } from '../support/log-capture';

const silent = createLogger('silent');
/** About 3,000 pages: past SQLite's default checkpoint threshold and the worker's (1,000), below the main connection's (10,000). */
const ROWS = 3_000;
const BODY = Buffer.alloc(4_000, 7);
/**
 * What the database file grows by at least once the worker has checkpointed these rows: it
 * leaves fewer than 1,000 frames uncopied (commits landing while it copies wait for the next
 * 1,000). The file grows only when a checkpoint copies pages out of the WAL into it.
 */
const COPIED = (ROWS - 1_000) * BODY.length;

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

describe('the SQLite checkpointer', () => {
  let dir: string;
  let file: string;
  let db: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-checkpoint-'));
    file = join(dir, 'test.sqlite');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One commit per ten rows, as a store's many small transactions. */
  const write = (rows = ROWS) => {
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const ten = db.transaction(() => {
      for (let i = 0; i < 10; i++) insert.run(BODY);
    });
    for (let i = 0; i < rows / 10; i++) ten();
  };

  /** Writes, then waits until the worker has copied the pages into the database file. */
  const writeAndSeeCopied = async () => {
    const before = sizeOf(file);
    write();
    await eventually(() => sizeOf(file) >= before + COPIED);
  };

  it('copies the WAL into the database file on its own thread', async () => {
    const checkpointer = new SqliteCheckpointer(file, db, silent);
    try {
      await writeAndSeeCopied();
    } finally {
      await checkpointer.close();
    }
  });

  it('keeps the main connection from checkpointing past SQLite’s default threshold', async () => {
    // Stopped first, so only the main connection could checkpoint what follows.
    await new SqliteCheckpointer(file, db, silent).close();
    const before = sizeOf(file);
    write();
    expect(sizeOf(file)).toBe(before);
    expect(sizeOf(`${file}-wal`)).toBeGreaterThan(ROWS * BODY.length);
  });

  // close() resolves once the worker has exited: a worker left running would time this test out.
  it('stops its worker on close; the WAL is checkpointed and removed, the rows stay', async () => {
    const checkpointer = new SqliteCheckpointer(file, db, silent);
    write(100);
    db.close();
    await checkpointer.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = new Database(file, { readonly: true });
    try {
      expect(reopened.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 100 });
    } finally {
      reopened.close();
    }
  });

  it('keeps checkpointing the other databases when one of them closes (they share the worker)', async () => {
    const otherFile = join(dir, 'other.sqlite');
    const other = new Database(otherFile);
    other.pragma('journal_mode = WAL');
    other.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    const first = new SqliteCheckpointer(otherFile, other, silent);
    const second = new SqliteCheckpointer(file, db, silent);
    try {
      other.close();
      await first.close();
      expect(existsSync(`${otherFile}-wal`)).toBe(false);
      await writeAndSeeCopied();
    } finally {
      await second.close();
    }
  });

  it('logs a database the worker cannot open, whose main connection checkpoints itself again', async () => {
    const { logger, lines } = capturingLogger('error');
    const checkpointer = new SqliteCheckpointer(join(dir, 'missing.sqlite'), db, logger);
    await eventually(() => lines.length > 0);
    expect(lines.map((l) => l.msg)).toEqual(['the sqlite wal checkpoint worker cannot open the database; the main connection checkpoints again']);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await checkpointer.close();
  });
});

describe('the embedded stores checkpoint off the main thread', () => {
  it('the gateway database', async () => {
    const t = await sqliteTestDatabase();
    try {
      const file = join(t.dataDir, 'gateway.sqlite');
      // Not the main connection: it checkpoints by itself only at 10,000 pages.
      expect(await t.db.dataSource.query('PRAGMA wal_autocheckpoint')).toEqual([{ wal_autocheckpoint: 10_000 }]);
      await t.db.dataSource.query('CREATE TABLE checkpoint_probe (body BLOB NOT NULL)');
      const before = sizeOf(file);
      for (let i = 0; i < ROWS / 10; i++) {
        await t.db.transaction(async (em) => {
          for (let j = 0; j < 10; j++) await em.query('INSERT INTO checkpoint_probe (body) VALUES (?)', [BODY]);
        });
      }
      await eventually(() => sizeOf(file) >= before + COPIED);
    } finally {
      await t.dispose();
    }
  });

  it('the blob store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-checkpoint-'));
    const store = new SqliteBlobStore(dir, silent);
    try {
      const file = join(dir, 'blobs.sqlite');
      // Not the store's own connection (private; read here only): it checkpoints by itself only at 10,000 pages.
      const own = (store as unknown as { db: Database.Database }).db;
      expect(own.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
      const before = sizeOf(file);
      // Puts of one event-loop turn share a commit: ten per commit.
      for (let i = 0; i < ROWS; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, j) => store.put(`k/${i + j}.bin`, BODY)));
      }
      await eventually(() => sizeOf(file) >= before + COPIED);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

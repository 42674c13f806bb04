import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BlobStoreUnavailableError } from '../../src/blobs/blob-store.port';
import { SqliteBlobStore } from '../../src/blobs/sqlite.adapter';
import { createLogger } from '../../src/logger';

const silent = createLogger('silent');

/** The writer thread of the store (private; reached here only to lose it on purpose). */
const writerThreadOf = (store: SqliteBlobStore) => (store as unknown as { writer: { worker: Worker | null } }).writer.worker;

/** SqliteBlobStore's writes go to a thread of their own (SqliteBlobWriter); reads stay on the store's connection. */
describe('the embedded blob store writer thread', () => {
  let dir: string;
  let store: SqliteBlobStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-blob-writer-'));
    store = new SqliteBlobStore(dir, silent);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const committed = (key: string): string | null => {
    const db = new Database(join(dir, 'blobs.sqlite'), { readonly: true });
    try {
      const row = db.prepare('SELECT body FROM blobs WHERE key = ?').get(key) as { body: Buffer } | undefined;
      return row ? row.body.toString('utf8') : null;
    } finally {
      db.close();
    }
  };

  it('shows a put to readers at once, and to other connections once it resolved, as one transaction per event-loop turn', async () => {
    const puts = [store.put('a/1.md', 'one', 'text/markdown'), store.put('a/2.md', 'two', 'text/markdown'), store.put('a/1.md', 'one again', 'text/markdown')];
    expect(await store.getText('a/1.md')).toBe('one again');
    expect(committed('a/2.md')).toBeNull();
    await Promise.all(puts);
    expect([committed('a/1.md'), committed('a/2.md')]).toEqual(['one again', 'two']);
    expect(await store.getText('a/2.md')).toBe('two');
  });

  it('fails what was sent to a thread that died as unavailable, writes nothing of it, and starts another for the next put', async () => {
    await store.put('before.txt', 'kept', 'text/plain');
    const lost = store.put('lost.txt', 'never written', 'text/plain');
    void writerThreadOf(store)?.terminate();
    await expect(lost).rejects.toBeInstanceOf(BlobStoreUnavailableError);
    expect(committed('lost.txt')).toBeNull();
    expect(await store.getText('lost.txt')).toBeNull();

    await store.put('after.txt', 'written', 'text/plain');
    expect([committed('before.txt'), committed('after.txt')]).toEqual(['kept', 'written']);
  });

  it('writes what was put before close, and refuses puts after it', async () => {
    const last = store.put('last.json', '{"n":1}', 'application/json');
    await store.close();
    await expect(last).resolves.toBeUndefined();
    expect(committed('last.json')).toBe('{"n":1}');
    await expect(store.put('late.json', '{}', 'application/json')).rejects.toBeInstanceOf(BlobStoreUnavailableError);
  });
});

import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedVectorStore } from '../../src/retrieval/embedded-vector-store.adapter';
import { encodeRecords } from '../../src/retrieval/vector-log';
import type { ChunkPayload, ChunkPoint, EmbeddingSpace } from '../../src/retrieval/vector-store.port';

const SPACE: EmbeddingSpace = { embedderId: 'test-space', dimension: 16 };

const payload = (path: string, repo = 'acme/api'): ChunkPayload => ({
  repo,
  path,
  startLine: 1,
  endLine: 3,
  language: 'typescript',
  contentHash: `c-${path}`,
  fileHash: `f-${path}`,
  text: `text of ${path} ${'x'.repeat(200)}`,
});

/** Point i has a vector along its own axis pair, so a query for i finds exactly i first. */
const point = (i: number, repo = 'acme/api'): ChunkPoint => {
  const vector = new Float32Array(SPACE.dimension);
  vector[i % SPACE.dimension] = 1;
  vector[(i * 7 + 3) % SPACE.dimension] = 0.5;
  return { id: `id-${i}`, vector, payload: payload(`src/file${i}.ts`, repo) };
};

describe('embedded vector store on disk', () => {
  let root: string;
  const stores: EmbeddedVectorStore[] = [];
  const open = (compactFloorBytes?: number) => {
    const store = new EmbeddedVectorStore(root, compactFloorBytes === undefined ? {} : { compactFloorBytes });
    stores.push(store);
    return store;
  };
  const dir = () => join(root, 'code');
  const top = async (store: EmbeddedVectorStore, i: number) =>
    (await store.search('code', SPACE, point(i).vector, {}, 1))[0]?.id;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gw-vectors-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('shows a reader what a writer in another store (another process) appended, deleted and relabelled', async () => {
    const writer = open();
    await writer.ensureCollection('code', SPACE);
    await writer.upsert('code', SPACE, [point(1), point(2)]);
    const reader = open();
    expect(await top(reader, 2)).toBe('id-2');

    await writer.upsert('code', SPACE, [point(3)]);
    await writer.deleteByIds('code', ['id-2']);
    await writer.setFileHash('code', ['id-1'], 'new-file-hash');
    expect(await top(reader, 3)).toBe('id-3');
    expect((await reader.listChunks('code', 'acme/api')).map((c) => [c.id, c.fileHash]).sort()).toEqual([
      ['id-1', 'new-file-hash'],
      ['id-3', 'f-src/file3.ts'],
    ]);
    await writer.deleteFiles('code', 'acme/api', ['src/file1.ts']);
    expect((await reader.listChunks('code', 'acme/api')).map((c) => c.id)).toEqual(['id-3']);
  });

  it('folds a grown log into a new snapshot that fresh and running readers both follow', async () => {
    const writer = open(64 * 1024);
    const reader = open();
    await writer.ensureCollection('code', SPACE);
    await writer.upsert('code', SPACE, [point(0)]);
    expect(await top(reader, 0)).toBe('id-0');
    for (let batch = 0; batch < 10; batch++) {
      await writer.upsert('code', SPACE, Array.from({ length: 50 }, (_, k) => point(1 + batch * 50 + k)));
    }
    await writer.deleteByIds('code', ['id-0']);
    const files = readdirSync(dir()).sort();
    expect(files.filter((f) => f.endsWith('.snapshot'))).toHaveLength(1);
    expect(files).not.toContain('1.snapshot');
    expect(JSON.parse(readFileSync(join(dir(), 'meta.json'), 'utf8'))).toMatchObject({ embedderId: 'test-space', dimension: 16 });

    for (const store of [reader, open()]) {
      expect((await store.listChunks('code', 'acme/api')).length).toBe(500);
      expect(await top(store, 0)).not.toBe('id-0');
      const hit = (await store.search('code', SPACE, point(321).vector, { pathPrefix: 'src/file321.ts' }, 1))[0]!;
      expect(hit.payload).toEqual(point(321).payload);
      expect(hit.score).toBeCloseTo(1, 5);
    }
  });

  it('refuses a second writer while the first is alive, and takes over a dead one\'s lock', async () => {
    const first = open();
    await first.ensureCollection('code', SPACE);
    await first.close();
    // A live process that is not us holds the lock.
    writeFileSync(join(dir(), 'writer.lock'), String(process.ppid));
    const second = open();
    await expect(second.upsert('code', SPACE, [point(1)])).rejects.toMatchObject({ kind: 'busy' });
    expect(await top(second, 1)).toBeUndefined();

    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir(), 'writer.lock'), String(dead));
    await second.upsert('code', SPACE, [point(1)]);
    expect(await top(open(), 1)).toBe('id-1');
    await second.close();
    expect(existsSync(join(dir(), 'writer.lock'))).toBe(false);
  });

  it('ignores half a frame left by a writer that died, and cuts it before the next write', async () => {
    const writer = open();
    await writer.ensureCollection('code', SPACE);
    await writer.upsert('code', SPACE, [point(1)]);
    await writer.close();
    const whole = encodeRecords([{ op: 'upsert', id: 'id-2', payload: point(2).payload, vector: point(2).vector }], 16);
    appendFileSync(join(dir(), '1.log'), whole.subarray(0, whole.length - 10));
    const reader = open();
    expect((await reader.listChunks('code', 'acme/api')).map((c) => c.id)).toEqual(['id-1']);
    const next = open();
    await next.upsert('code', SPACE, [point(3)]);
    expect((await open().listChunks('code', 'acme/api')).map((c) => c.id).sort()).toEqual(['id-1', 'id-3']);
    expect((await reader.listChunks('code', 'acme/api')).map((c) => c.id).sort()).toEqual(['id-1', 'id-3']);
  });

  it('reports a damaged file as unavailable instead of serving garbage', async () => {
    const writer = open();
    await writer.ensureCollection('code', SPACE);
    const frame = encodeRecords([{ op: 'upsert', id: 'id-1', payload: point(1).payload, vector: point(1).vector }], 16);
    frame[frame.length - 1] ^= 0xff;
    appendFileSync(join(dir(), '1.log'), frame);
    await expect(open().search('code', SPACE, point(1).vector, {}, 1)).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('keeps collections of other embedders apart', async () => {
    const store = open();
    await store.ensureCollection('code', SPACE);
    await expect(store.ensureCollection('code', { embedderId: 'test-space', dimension: 32 })).rejects.toMatchObject({
      kind: 'embedder-mismatch',
    });
    await expect(store.search('code', { embedderId: 'other', dimension: 16 }, point(1).vector, {}, 1)).rejects.toMatchObject({
      kind: 'embedder-mismatch',
    });
    await expect(store.upsert('code', SPACE, [{ ...point(1), vector: new Float32Array(3) }])).rejects.toMatchObject({
      kind: 'embedder-mismatch',
    });
    await expect(store.search('missing', SPACE, point(1).vector, {}, 1)).rejects.toMatchObject({ kind: 'collection-missing' });
  });
});

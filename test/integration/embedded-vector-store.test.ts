import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { seededRandom } from '../../src/domain/seeded-random';
import { EmbeddedVectorStore } from '../../src/retrieval/embedded-vector-store.adapter';
import { createLogger } from '../../src/logger';
import type { Embedder } from '../../src/retrieval/embedder.port';
import { VectorRetriever } from '../../src/retrieval/vector-retriever';
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
  const open = () => {
    const store = new EmbeddedVectorStore(root);
    stores.push(store);
    return store;
  };
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
    await writer.placeChunks('code', 'new-file-hash', [{ id: 'id-1', startLine: 1, endLine: 3 }]);
    expect(await top(reader, 3)).toBe('id-3');
    expect((await reader.listChunks('code', 'acme/api')).map((c) => [c.id, c.fileHash]).sort()).toEqual([
      ['id-1', 'new-file-hash'],
      ['id-3', 'f-src/file3.ts'],
    ]);
    await writer.deleteFiles('code', 'acme/api', ['src/file1.ts']);
    expect((await reader.listChunks('code', 'acme/api')).map((c) => c.id)).toEqual(['id-3']);
  });

  it('finds a collection another store (an ingest in another process) indexed after this one found it missing', async () => {
    const reader = open();
    await open().ensureCollection('other', SPACE);
    await expect(reader.checkIndexed('code')).rejects.toMatchObject({ kind: 'collection-missing' });
    await expect(reader.checkIndexed('code')).rejects.toMatchObject({ kind: 'collection-missing' });
    const writer = open();
    await writer.ensureCollection('code', SPACE);
    await writer.upsert('code', SPACE, [point(1), point(2)]);
    await expect(reader.checkIndexed('code')).resolves.toBeUndefined();
    expect(await top(reader, 2)).toBe('id-2');
    await writer.upsert('code', SPACE, [point(3)]);
    expect(await top(reader, 3)).toBe('id-3');
  });

  it('a restarted reader answers exactly like the writer after updates, deletes and moved lines', async () => {
    const writer = open();
    await writer.ensureCollection('code', SPACE);
    // Distinct vectors, so no two rows tie and the order of answers is fixed.
    const next = seededRandom(11);
    const vectors = Array.from({ length: 300 }, () => Float32Array.from({ length: SPACE.dimension }, () => next() - 0.5));
    const distinct = (i: number, repo = 'acme/api'): ChunkPoint => ({ ...point(i, repo), vector: vectors[i]! });
    // Two repos of 150 chunks, then updates, deletes and moved lines.
    for (let batch = 0; batch < 6; batch++) {
      await writer.upsert('code', SPACE, Array.from({ length: 50 }, (_, k) => distinct(batch * 50 + k, batch % 2 ? 'acme/web' : 'acme/api')));
    }
    await writer.upsert('code', SPACE, [{ ...distinct(7), vector: vectors[8]! }]);
    await writer.deleteByIds('code', Array.from({ length: 30 }, (_, i) => `id-${i * 3}`));
    await writer.placeChunks('code', 'moved-file', [{ id: 'id-10', startLine: 41, endLine: 80 }]);

    const queries = Array.from({ length: 16 }, (_, i) => vectors[i * 5 + 1]!);
    const filters = [{}, { repo: 'acme/web' }, { pathPrefix: 'src/file10.ts' }, { repo: 'acme/api', pathPrefix: 'src/file1' }];
    const answers = async (store: EmbeddedVectorStore) => {
      const out: unknown[] = [];
      for (const q of queries) for (const f of filters) out.push((await store.search('code', SPACE, q, f, 8)).map((h) => [h.id, h.score.toFixed(5), h.payload.startLine, h.payload.fileHash]));
      return out;
    };
    const fromWriter = await answers(writer);
    await writer.close();
    const restarted = open();
    expect(await answers(restarted)).toEqual(fromWriter);

    const all = await restarted.listChunks('code', 'acme/api');
    expect(all.some((c) => c.id === 'id-0' || c.id === 'id-3')).toBe(false);
    const hits = await restarted.search('code', SPACE, vectors[3]!, { pathPrefix: 'src/file10.ts' }, 8);
    expect(hits.map((h) => [h.id, h.payload.startLine, h.payload.endLine, h.payload.fileHash])).toEqual([['id-10', 41, 80, 'moved-file']]);
    // Filters are exact and never cost results: every web chunk matching, none other.
    const web = await restarted.search('code', SPACE, vectors[1]!, { repo: 'acme/web' }, 500);
    expect(web.length).toBe((await restarted.listChunks('code', 'acme/web')).length);
    expect(web.every((h) => h.payload.repo === 'acme/web')).toBe(true);
    // The updated row answers with its new vector.
    expect((await restarted.search('code', SPACE, vectors[8]!, { pathPrefix: 'src/file7.ts' }, 1))[0]!.score).toBeCloseTo(1, 5);
  });

  it('reports busy when another process holds the write lock past the busy timeout, and writes once it is let go', async () => {
    const store = open();
    await store.ensureCollection('code', SPACE);
    const other = new Database(join(root, 'vectors.sqlite'));
    try {
      other.exec('BEGIN IMMEDIATE');
      await expect(store.upsert('code', SPACE, [point(1)])).rejects.toMatchObject({ kind: 'busy' });
      other.exec('ROLLBACK');
      await store.upsert('code', SPACE, [point(1)]);
      expect(await top(open(), 1)).toBe('id-1');
    } finally {
      other.close();
    }
  });

  it('reports a damaged database file as unavailable instead of serving garbage', async () => {
    writeFileSync(join(root, 'vectors.sqlite'), Buffer.alloc(8192, 0x5a));
    await expect(open().search('code', SPACE, point(1).vector, {}, 1)).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('names an index left by an earlier version (files per collection) instead of reading it', async () => {
    mkdirSync(join(root, 'code'));
    writeFileSync(join(root, 'code', 'meta.json'), '{}');
    await expect(open().search('code', SPACE, point(1).vector, {}, 1)).rejects.toMatchObject({
      kind: 'collection-missing',
      message: expect.stringContaining('re-run the ingest'),
    });
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

  it('refuses a chunk id that is not well-formed Unicode and keeps the batch out', async () => {
    const store = open();
    await store.ensureCollection('code', SPACE);
    await expect(store.upsert('code', SPACE, [point(1), { ...point(2), id: 'id-\ud800' }])).rejects.toMatchObject({ kind: 'bad-request' });
    await store.upsert('code', SPACE, [{ ...point(3), id: 'id-\u{1F600}' }]);
    expect(await top(store, 1)).not.toBe('id-1');
    expect(await top(store, 3)).toBe('id-\u{1F600}');
  });

  it('answers a burst of concurrent searches each with its own hits, around a write, and refuses them all on a missing collection', async () => {
    const store = open();
    await store.ensureCollection('code', SPACE);
    await store.upsert('code', SPACE, [point(1), point(2), point(3)]);
    const first = Array.from({ length: 30 }, (_, n) => top(store, (n % 3) + 1));
    const write = store.upsert('code', SPACE, [point(4)]);
    const after = Array.from({ length: 30 }, (_, n) => top(store, (n % 4) + 1));
    expect(await Promise.all(first)).toEqual(Array.from({ length: 30 }, (_, n) => `id-${(n % 3) + 1}`));
    await write;
    expect(await Promise.all(after)).toEqual(Array.from({ length: 30 }, (_, n) => `id-${(n % 4) + 1}`));
    const missing = await Promise.allSettled(Array.from({ length: 20 }, () => store.search('absent', SPACE, point(1).vector, {}, 1)));
    expect(missing.map((r) => (r.status === 'rejected' ? (r.reason as { kind?: string }).kind : 'answered'))).toEqual(
      Array.from({ length: 20 }, () => 'collection-missing'),
    );
  });

  it('spares the embedder (a provider call) when the collection to search was never indexed', async () => {
    const store = open();
    const queries: string[] = [];
    const embedder: Embedder = {
      id: SPACE.embedderId,
      dimension: SPACE.dimension,
      embed: async (texts) => {
        queries.push(...texts);
        return texts.map(() => point(2).vector);
      },
    };
    const retriever = new VectorRetriever(embedder, store, { orgScopedCollections: false, logger: createLogger('silent') });
    const request = { orgId: 'acme', collection: 'code', query: 'where is file 2?', repo: null, language: null, pathPrefix: null, limit: 1 };
    await expect(retriever.retrieve(request)).rejects.toMatchObject({ kind: 'collection-missing' });
    expect(queries).toEqual([]);

    await store.ensureCollection('code', SPACE);
    await store.upsert('code', SPACE, [point(1), point(2)]);
    expect((await retriever.retrieve(request)).map((c) => c.ref.chunkId)).toEqual(['id-2']);
    expect(queries).toEqual(['where is file 2?']);
  });
});

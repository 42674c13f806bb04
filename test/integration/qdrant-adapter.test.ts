import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createLogger } from '../../src/logger';
import { chunkLines, sha256 } from '../../src/retrieval/chunking';
import { ingestTree } from '../../src/retrieval/ingest';
import { LOCAL_EMBEDDER_DIMENSION as DIM, LocalHashEmbedder } from '../../src/retrieval/local-embedder.adapter';
import { QdrantVectorStore } from '../../src/retrieval/qdrant-vector-store.adapter';
import type { RetrievalRequest } from '../../src/retrieval/retrieval.port';
import { VectorRetriever } from '../../src/retrieval/vector-retriever';
import { FakeQdrant } from '../support/fake-qdrant';
import { RecordingEmbedder, removeTree, SAMPLE_CODE, writeTree } from '../support/source-tree';

const logger = createLogger('silent');
const API_KEY = 'qdrant-test-key';
const PAYLOAD_KEYS = ['contentHash', 'endLine', 'fileHash', 'language', 'path', 'pathPrefixes', 'repo', 'startLine', 'text'];

describe('Qdrant adapter against a Qdrant REST stand-in', () => {
  let fake: FakeQdrant;
  let url: string;
  let root: string;
  let store: QdrantVectorStore;
  let retriever: VectorRetriever;
  const embedder = new RecordingEmbedder(new LocalHashEmbedder());
  const ask = (query: string, extra: Partial<RetrievalRequest> = {}) =>
    retriever.retrieve({ orgId: 'acme', collection: 'code', query, repo: 'acme/api', language: null, pathPrefix: null, limit: 8, ...extra });
  const storeAt = (at: string, apiKey: string | null = API_KEY) => new QdrantVectorStore({ url: at, apiKey, timeoutMs: 2000 });

  beforeAll(async () => {
    // The client warns that an API key travels over plain http; this test server has no TLS.
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    fake = new FakeQdrant(API_KEY);
    url = await fake.start();
    root = writeTree(SAMPLE_CODE);
    store = storeAt(url);
    retriever = new VectorRetriever(embedder, store, { orgScopedCollections: false, logger });
    await ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: 'code' });
  });
  afterAll(async () => {
    await fake.stop();
    removeTree(root);
    jest.restoreAllMocks();
  });

  it('creates the collection with a vector named after the embedder, and keyword indexes for the filters', () => {
    expect(fake.requestsTo('PUT', /^\/collections\/code$/).map((r) => r.body)).toEqual([
      { vectors: { 'local-hash-v1': { size: DIM, distance: 'Cosine' } } },
    ]);
    expect(fake.requestsTo('PUT', /^\/collections\/code\/index$/).map((r) => r.body)).toEqual(
      ['repo', 'path', 'language', 'pathPrefixes'].map((field_name) => ({ field_name, field_schema: 'keyword' })),
    );
    expect(fake.requests.every((r) => r.headers['api-key'] === API_KEY)).toBe(true);
  });

  it('upserts UUID points with the chunk payload and path prefixes, never a workspace id', () => {
    const upserts = fake.requestsTo('PUT', /^\/collections\/code\/points$/);
    expect(upserts.length).toBeGreaterThan(0);
    for (const r of upserts) {
      expect(r.query.wait).toBe('true');
      expect(JSON.stringify(r.body)).not.toMatch(/workspace/i);
    }
    const points = upserts.flatMap((r) => (r.body as { points: { id: string; vector: Record<string, number[]>; payload: Record<string, unknown> }[] }).points);
    expect(points.length).toBe(Object.keys(SAMPLE_CODE).length);
    for (const p of points) {
      expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Object.keys(p.vector)).toEqual(['local-hash-v1']);
      expect(p.vector['local-hash-v1']).toHaveLength(DIM);
      expect(Object.keys(p.payload).sort()).toEqual(PAYLOAD_KEYS);
    }
    const button = points.find((p) => p.payload.path === 'src/ui/primitives/button.tsx')!;
    expect(button.payload).toMatchObject({
      repo: 'acme/api',
      language: 'typescript',
      startLine: 1,
      endLine: 3,
      fileHash: sha256(SAMPLE_CODE['src/ui/primitives/button.tsx']!),
      pathPrefixes: ['src', 'src/ui', 'src/ui/primitives', 'src/ui/primitives/button.tsx'],
    });
  });

  it('queries the named vector with repo, language and path-prefix filters and maps the hits', async () => {
    fake.requests.length = 0;
    const hits = await ask('PrimaryButton', { language: 'typescript', pathPrefix: './src/ui/' });
    const [query] = fake.requestsTo('POST', /^\/collections\/code\/points\/query$/);
    expect(query!.body).toMatchObject({
      using: 'local-hash-v1',
      limit: 8,
      with_payload: true,
      filter: {
        must: [
          { key: 'repo', match: { value: 'acme/api' } },
          { key: 'language', match: { value: 'typescript' } },
          { key: 'pathPrefixes', match: { value: 'src/ui' } },
        ],
      },
    });
    expect((query!.body as { query: number[] }).query).toHaveLength(DIM);
    expect(hits.map((h) => h.ref.path)).toEqual(['src/ui/primitives/button.tsx']);
    expect(hits[0]).toMatchObject({ language: 'typescript', text: SAMPLE_CODE['src/ui/primitives/button.tsx']!.trimEnd() });

    const [best] = await ask('where is parseInvoiceTotal defined?');
    expect(best!.ref).toMatchObject({ path: 'src/billing/invoice.ts', startLine: 1, endLine: 7 });
    const unfiltered = fake.requestsTo('POST', /points\/query$/).at(-1)!.body as Record<string, unknown>;
    expect(unfiltered.filter).toEqual({ must: [{ key: 'repo', match: { value: 'acme/api' } }] });
  });

  it('re-ingests incrementally with scroll, delete by id and by filter, and payload updates', async () => {
    const big = Array.from({ length: 130 }, (_, i) => `export const value${i + 1} = ${i + 1};`).join('\n') + '\n';
    writeTree({ 'long/big.ts': big }, root);
    await ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: 'code' });
    fake.requests.length = 0;
    embedder.documents.length = 0;
    // Line 125 is in the last one or two of big.ts's chunks; the others stay.
    const edited = big.replace('value125 = 125', 'value125 = -1');
    const oldHashes = new Set(chunkLines(big).map((c) => c.contentHash));
    const bigChunks = chunkLines(edited);
    const touched = bigChunks.filter((c) => !oldHashes.has(c.contentHash)).length;
    expect(touched).toBeGreaterThanOrEqual(1);
    expect(touched).toBeLessThanOrEqual(2);
    writeTree({ 'long/big.ts': edited }, root);
    writeFileSync(join(root, 'src/billing/report.ts'), `${SAMPLE_CODE['src/billing/report.ts']}export const reportVersion = 2;\n`);
    unlinkSync(join(root, 'docs/guide.md'));
    const summary = await ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: 'code' });
    expect(summary).toMatchObject({ files: 5, chunksAdded: touched + 1, chunksRemoved: touched + 2, chunksUnchanged: bigChunks.length - touched + 3 });
    expect(embedder.documents).toHaveLength(touched + 1);

    // The unchanged big.ts chunks are relabelled with the new file hash and their lines, in one batch.
    const relabels = fake.requestsTo('POST', /points\/batch$/);
    expect(relabels.map((r) => r.query.wait)).toEqual(['true']);
    const operations = (relabels[0]!.body as { operations: { set_payload: { payload: Record<string, unknown>; points: string[] } }[] }).operations;
    expect(operations.map((o) => o.set_payload.payload)).toEqual(
      bigChunks.filter((c) => oldHashes.has(c.contentHash)).map((c) => ({ fileHash: sha256(edited), startLine: c.startLine, endLine: c.endLine })),
    );
    expect(operations.every((o) => o.set_payload.points.length === 1)).toBe(true);

    const [scroll] = fake.requestsTo('POST', /points\/scroll$/);
    expect(scroll!.body).toEqual({
      filter: { must: [{ key: 'repo', match: { value: 'acme/api' } }] },
      limit: 1000,
      with_payload: ['path', 'fileHash'],
      with_vector: false,
    });
    const deletes = fake.requestsTo('POST', /points\/delete$/).map((r) => r.body);
    expect(deletes).toContainEqual({
      filter: { must: [{ key: 'repo', match: { value: 'acme/api' } }, { key: 'path', match: { any: ['docs/guide.md'] } }] },
    });
    expect(deletes).toContainEqual({ points: [expect.stringMatching(/^[0-9a-f-]{36}$/), expect.stringMatching(/^[0-9a-f-]{36}$/)] });
    const stored = [...fake.collections.get('code')!.points.values()];
    expect([...new Set(stored.map((p) => p.payload.path))].sort()).toEqual([
      'long/big.ts',
      'src/billing/invoice.ts',
      'src/billing/report.ts',
      'src/ui/primitives/button.tsx',
      'src/ui/theme.css',
    ]);
    expect(stored.find((p) => p.payload.path === 'src/billing/report.ts')!.payload.text).toContain('reportVersion');
    expect(new Set(stored.filter((p) => p.payload.path === 'long/big.ts').map((p) => p.payload.fileHash))).toEqual(new Set([sha256(edited)]));
  });

  it('moves the lines of chunks shifted by an inserted line without embedding them again, keeping their ids', async () => {
    const bigPath = join(root, 'long/big.ts');
    const points = () => [...fake.collections.get('code')!.points.values()].filter((p) => p.payload.path === 'long/big.ts');
    const before = new Map(points().map((p) => [String(p.id), p.payload.startLine as number]));
    embedder.documents.length = 0;
    writeFileSync(bigPath, `// header\n${readFileSync(bigPath, 'utf8')}`);
    const summary = await ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: 'code' });
    expect(summary.chunksAdded).toBe(1);
    expect(embedder.documents).toHaveLength(1);
    const after = points();
    const kept = after.filter((p) => before.has(String(p.id)));
    expect(kept).toHaveLength(after.length - 1);
    for (const p of kept) expect(p.payload.startLine).toBe(before.get(String(p.id))! + 1);
  });

  it('follows scroll pages over more chunks than one page holds', async () => {
    const many = writeTree(Object.fromEntries(Array.from({ length: 1005 }, (_, i) => [`f${i}.ts`, `export const v${i} = ${i};\n`])));
    try {
      const first = await ingestTree({ store, embedder }, { root: many, repo: 'acme/many', collection: 'many' });
      expect(first.chunksAdded).toBe(1005);
      fake.requests.length = 0;
      const again = await ingestTree({ store, embedder }, { root: many, repo: 'acme/many', collection: 'many' });
      expect(again).toMatchObject({ chunksAdded: 0, chunksUnchanged: 1005, chunksRemoved: 0 });
      const pages = fake.requestsTo('POST', /many\/points\/scroll$/);
      expect(pages).toHaveLength(2);
      expect((pages[1]!.body as { offset?: unknown }).offset).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
    } finally {
      removeTree(many);
    }
  });

  it('refuses a collection filled by another embedder, naming what it holds', async () => {
    fake.createCollection('foreign', { size: 1536, distance: 'Cosine' });
    await expect(ask('x', { collection: 'foreign' })).rejects.toMatchObject({
      kind: 'embedder-mismatch',
      message: expect.stringContaining('unnamed vectors of dimension 1536'),
    });
    fake.createCollection('resized', { 'local-hash-v1': { size: 256, distance: 'Cosine' } });
    await expect(ask('x', { collection: 'resized' })).rejects.toMatchObject({
      kind: 'embedder-mismatch',
      message: expect.stringContaining('local-hash-v1 (dimension 256)'),
    });
    await expect(ask('x', { collection: 'absent' })).rejects.toMatchObject({ kind: 'collection-missing' });
  });

  it('turns an unreachable or refusing Qdrant into an "unavailable" error that names no infrastructure', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    for (const broken of [storeAt(`http://127.0.0.1:${port}`), storeAt(url, 'wrong-key')]) {
      const r = new VectorRetriever(embedder, broken, { orgScopedCollections: false, logger });
      const failure = r.retrieve({ orgId: 'acme', collection: 'code', query: 'x', repo: null, language: null, pathPrefix: null, limit: 3 });
      await expect(failure).rejects.toMatchObject({ kind: 'unavailable' });
      await expect(failure).rejects.not.toThrow(/127\.0\.0\.1|api.key/i);
    }
  });
});

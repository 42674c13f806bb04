import { RetrievalError } from '../../src/retrieval/retrieval-error';
import type { ChunkPayload, ChunkPoint, EmbeddingSpace, VectorStore } from '../../src/retrieval/vector-store.port';

export interface VectorStoreSubject {
  readonly store: VectorStore;
  dispose(): Promise<void>;
}

const SPACE: EmbeddingSpace = { embedderId: 'contract-space', dimension: 16 };

/** Point ids are UUIDs: what ingest produces, and all Qdrant accepts. */
const idOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** Point i points along its own axis pair, so a query for i finds exactly i first. */
const vectorOf = (i: number): Float32Array => {
  const vector = new Float32Array(SPACE.dimension);
  vector[i % SPACE.dimension] = 1;
  vector[(i * 7 + 3) % SPACE.dimension] = 0.5;
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
};

const point = (i: number, path: string, extra: Partial<ChunkPayload> = {}): ChunkPoint => ({
  id: idOf(i),
  vector: vectorOf(i),
  payload: { repo: 'acme/api', path, startLine: 1, endLine: 3, language: 'typescript', contentHash: `c-${i}`, fileHash: `f-${path}`, text: `text ${i}`, ...extra },
});

/** What ingest and retrieval need of every vector store (vector-store.port.ts), as graphql-ws runs one suite per socket. */
export function vectorStoreContract(open: () => Promise<VectorStoreSubject>): void {
  let subject: VectorStoreSubject;
  let store: VectorStore;
  let n = 0;
  /** A collection of its own per test. */
  const fresh = async (points: readonly ChunkPoint[]) => {
    const collection = `contract_${++n}`;
    await store.ensureCollection(collection, SPACE);
    await store.upsert(collection, SPACE, points);
    return collection;
  };
  const ids = (hits: readonly { id: string }[]) => hits.map((h) => h.id);

  beforeAll(async () => {
    subject = await open();
    store = subject.store;
  });
  afterAll(() => subject.dispose());

  it('finds the nearest chunks first, by cosine similarity, with their payload', async () => {
    const points = [point(1, 'src/a.ts'), point(2, 'src/b.ts'), point(3, 'lib/c.py', { language: 'python' })];
    const collection = await fresh(points);
    const hits = await store.search(collection, SPACE, vectorOf(2), {}, 2);
    expect(ids(hits)).toHaveLength(2);
    expect(hits[0]).toMatchObject({ id: idOf(2), payload: points[1]!.payload });
    expect(hits[0]!.score).toBeCloseTo(1, 4);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
  });

  it('filters by repository, language and path prefix on whole segments', async () => {
    const collection = await fresh([
      point(1, 'src/auth/login.ts'),
      point(2, 'src/authz.ts'),
      point(3, 'src/auth/hash.py', { language: 'python' }),
      point(4, 'src/auth/other.ts', { repo: 'acme/web' }),
    ]);
    const found = async (filter: Parameters<VectorStore['search']>[3]) => ids(await store.search(collection, SPACE, vectorOf(1), filter, 10)).sort();
    expect(await found({ pathPrefix: 'src/auth' })).toEqual([idOf(1), idOf(3), idOf(4)]);
    expect(await found({ pathPrefix: 'src/auth', repo: 'acme/api' })).toEqual([idOf(1), idOf(3)]);
    expect(await found({ repo: 'acme/api', language: 'python' })).toEqual([idOf(3)]);
    expect(await found({ repo: null, language: null, pathPrefix: null })).toHaveLength(4);
  });

  it('lists, deletes by id and by file, and upserts in place', async () => {
    const collection = await fresh([point(1, 'src/a.ts'), point(2, 'src/a.ts'), point(3, 'src/b.ts'), point(4, 'src/c.ts'), point(5, 'other.ts', { repo: 'acme/web' })]);
    expect((await store.listChunks(collection, 'acme/api')).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [1, 2, 3, 4].map((i) => ({ id: idOf(i), path: i <= 2 ? 'src/a.ts' : i === 3 ? 'src/b.ts' : 'src/c.ts', fileHash: `f-${i <= 2 ? 'src/a.ts' : i === 3 ? 'src/b.ts' : 'src/c.ts'}` })),
    );
    await store.deleteFiles(collection, 'acme/api', ['src/a.ts']);
    await store.deleteByIds(collection, [idOf(3)]);
    await store.upsert(collection, SPACE, [point(4, 'src/c.ts', { text: 'rewritten' })]);
    expect((await store.listChunks(collection, 'acme/api')).map((c) => c.id)).toEqual([idOf(4)]);
    expect((await store.search(collection, SPACE, vectorOf(4), { repo: 'acme/api' }, 5)).map((h) => h.payload.text)).toEqual(['rewritten']);
    expect(ids(await store.search(collection, SPACE, vectorOf(5), { repo: 'acme/web' }, 5))).toEqual([idOf(5)]);
  });

  it('moves unchanged chunks to the lines of a new file version', async () => {
    const collection = await fresh([point(1, 'src/a.ts'), point(2, 'src/a.ts')]);
    await store.placeChunks(collection, 'f-new', [{ id: idOf(1), startLine: 11, endLine: 13 }]);
    const [moved] = await store.search(collection, SPACE, vectorOf(1), {}, 1);
    expect(moved!.payload).toMatchObject({ startLine: 11, endLine: 13, fileHash: 'f-new', text: 'text 1' });
    const [kept] = await store.search(collection, SPACE, vectorOf(2), {}, 1);
    expect(kept!.payload).toMatchObject({ startLine: 1, endLine: 3, fileHash: 'f-src/a.ts' });
  });

  it('refuses a collection built by another embedder, and reports one never indexed', async () => {
    const collection = await fresh([point(1, 'src/a.ts')]);
    const other: EmbeddingSpace = { embedderId: 'another-embedder', dimension: 8 };
    await expect(store.ensureCollection(collection, other)).rejects.toMatchObject({ kind: 'embedder-mismatch' });
    await expect(store.search('contract_never_indexed', SPACE, vectorOf(1), {}, 1)).rejects.toBeInstanceOf(RetrievalError);
  });
}

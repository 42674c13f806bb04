import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom as random } from '../../src/domain/seeded-random';
import { matchesPathPrefix, normalizePathPrefix, pathPrefixesOf } from '../../src/retrieval/chunk-filter';
import { EmbeddedVectorStore } from '../../src/retrieval/embedded-vector-store.adapter';
import { QuantizedRows } from '../../src/retrieval/quantized-rows';
import type { ChunkFilter, ChunkPayload, ChunkPoint, EmbeddingSpace } from '../../src/retrieval/vector-store.port';

const payload = (path: string, repo = 'acme/api', language: string | null = 'typescript'): ChunkPayload => ({
  repo,
  path,
  startLine: 1,
  endLine: 10,
  language,
  contentHash: `hash of ${path}`,
  fileHash: 'f',
  text: `text of ${path}`,
});

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
};

describe('embedded vector store search (int8 scan, exact float32 ranking)', () => {
  let root: string;
  let store: EmbeddedVectorStore;
  let n = 0;
  const next = random(7);
  /** A fresh collection of `dimension` holding `rows`. */
  const collection = async (dimension: number, rows: readonly ChunkPoint[]) => {
    const name = `c${++n}`;
    const space: EmbeddingSpace = { embedderId: 'test', dimension };
    await store.ensureCollection(name, space);
    await store.upsert(name, space, rows);
    return { name, space };
  };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'gw-vector-search-'));
    store = new EmbeddedVectorStore(root);
  });
  afterAll(async () => {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  const dim = 37;
  const vec = () => Float32Array.from({ length: dim }, () => next() * 2 - 1);
  const rows = Array.from({ length: 500 }, (_, i) => ({
    id: `c${i}`,
    vector: vec(),
    payload: payload(`src/${['ui', 'ui/primitives', 'uikit', 'api'][i % 4]}/f${i}.ts`, i % 3 === 0 ? 'acme/web' : 'acme/api', i % 5 === 0 ? null : i % 2 ? 'typescript' : 'css'),
  }));
  const reference = (q: Float32Array, keep: (p: ChunkPayload) => boolean, k: number) =>
    rows
      .filter((r) => keep(r.payload))
      .map((r) => ({ id: r.id, score: cosine(q, r.vector) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k);

  it('returns exactly the best cosine matches, best first, with float32 scores and the stored payload', async () => {
    const { name, space } = await collection(dim, rows);
    for (let trial = 0; trial < 20; trial++) {
      const q = vec();
      const got = await store.search(name, space, q, {}, 10);
      const want = reference(q, () => true, 10);
      expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
      got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
      expect(got[0]!.payload).toEqual(rows.find((r) => r.id === got[0]!.id)!.payload);
    }
  });

  it('applies repo, language and path filters before ranking', async () => {
    const { name, space } = await collection(dim, rows);
    const q = vec();
    const cases: [ChunkFilter, (p: ChunkPayload) => boolean][] = [
      [{ repo: 'acme/web' }, (p) => p.repo === 'acme/web'],
      [{ language: 'css' }, (p) => p.language === 'css'],
      [{ repo: 'acme/api', language: 'typescript', pathPrefix: 'src/ui' }, (p) => p.repo === 'acme/api' && p.language === 'typescript' && p.path.startsWith('src/ui/')],
      [{ pathPrefix: './src/ui/primitives/' }, (p) => p.path.startsWith('src/ui/primitives/')],
      [{ pathPrefixes: ['src/uikit', 'src/api'] }, (p) => p.path.startsWith('src/uikit/') || p.path.startsWith('src/api/')],
    ];
    for (const [filter, keep] of cases) {
      const got = (await store.search(name, space, q, filter, 15)).map((h) => h.id);
      expect(got).toEqual(reference(q, keep, 15).map((h) => h.id));
      expect(got.length).toBe(15);
    }
    expect((await store.search(name, space, q, { pathPrefix: 'src/ui' }, 500)).some((h) => h.payload.path.startsWith('src/uikit/'))).toBe(false);
    expect(await store.search(name, space, q, { repo: 'unknown/repo' }, 5)).toEqual([]);
    expect(await store.search(name, space, q, { language: 'cobol' }, 5)).toEqual([]);
  });

  it('finds every row a narrow filter lets through, however far from the query, and nothing else', async () => {
    const near = Float32Array.from({ length: 16 }, (_, j) => (j === 0 ? 1 : 0));
    // 3,000 rows close to the query, and 5 rows of one file pointing the other way.
    const { name, space } = await collection(16, [
      ...Array.from({ length: 3000 }, (_, i) => ({ id: `n${i}`, vector: Float32Array.from(near, (x) => x + next() * 0.1), payload: payload(`src/near/f${i}.ts`) })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `far${i}`, vector: Float32Array.from(near, (x) => -x + next() * 0.1), payload: payload('src/far/only.ts') })),
    ]);
    const hits = await store.search(name, space, near, { pathPrefix: 'src/far' }, 8);
    expect(hits.map((h) => h.id).sort()).toEqual(['far0', 'far1', 'far2', 'far3', 'far4']);
    expect(await store.search(name, space, near, { pathPrefix: 'src/far', language: 'css' }, 8)).toEqual([]);
    expect((await store.search(name, space, near, {}, 8)).every((h) => h.id.startsWith('n'))).toBe(true);
  });

  it('keeps recall@8 of 1 against an exact scan on clustered, anisotropic vectors after heavy churn', async () => {
    const d = 256;
    const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: d }, () => next() - 0.5));
    const scale = Float32Array.from({ length: d }, () => Math.exp(next() - 0.5));
    const sample = (c: number) => Float32Array.from(centres[c]!, (x, j) => (0.4 + x + (next() - 0.5) * 0.6) * scale[j]!);
    const { name, space } = await collection(d, []);
    const live = new Map<string, Float32Array>();
    const put = async (ids: string[], centre: (i: number) => number) => {
      const points = ids.map((id, i) => ({ id, vector: sample(centre(i)), payload: payload(`src/${id}.ts`) }));
      await store.upsert(name, space, points);
      for (const p of points) live.set(p.id, p.vector);
    };
    await put(Array.from({ length: 3000 }, (_, i) => `r${i}`), (i) => i % 20);
    // Searched once, so the rest is applied to a loaded copy: replace a third, delete a sixth, add a tenth.
    await store.search(name, space, sample(0), {}, 8);
    await put(Array.from({ length: 1000 }, (_, i) => `r${i * 3}`), (i) => (i + 7) % 20);
    const doomed = Array.from({ length: 500 }, (_, i) => `r${i * 6 + 1}`);
    await store.deleteByIds(name, doomed);
    for (const id of doomed) live.delete(id);
    await put(Array.from({ length: 300 }, (_, i) => `new${i}`), (i) => (i * 3) % 20);
    let found = 0;
    for (let trial = 0; trial < 40; trial++) {
      const q = sample(trial % 20);
      const want = [...live].map(([id, v]) => ({ id, score: cosine(q, v) })).sort((a, b) => b.score - a.score).slice(0, 8);
      const got = new Set((await store.search(name, space, q, {}, 8)).map((h) => h.id));
      found += want.filter((w) => got.has(w.id)).length;
    }
    expect(found / (40 * 8)).toBe(1);
    expect((await store.listChunks(name, 'acme/api')).length).toBe(live.size);
  });
});

describe('QuantizedRows: filtered scans in bounded blocks', () => {
  const dim = 48;
  const next = random(11);
  const vec = () => Float32Array.from({ length: dim }, () => next() * 2 - 1);
  // 37 rows a block: a filter letting most rows through is scanned in dozens of blocks.
  const blocked = new QuantizedRows(dim, dim * 37);
  const whole = new QuantizedRows(dim, Number.MAX_SAFE_INTEGER);
  const live = new Set<number>();
  for (let rowid = 1; rowid <= 3000; rowid++) {
    const v = vec();
    const labels = { repo: 'r', language: null, path: `dir${rowid % 10}/f.ts` };
    blocked.set(rowid, labels, v);
    whole.set(rowid, labels, v);
    if (rowid % 7 !== 0) live.add(rowid);
  }
  // Holes and moved rows, as deletions leave them.
  blocked.retain(live);
  whole.retain(live);

  it('finds the same nearest rows, in the same order, as one scan of the whole subset', () => {
    for (let i = 0; i < 40; i++) {
      const query = vec();
      const filter = { pathPrefixes: Array.from({ length: 1 + (i % 9) }, (_, j) => `dir${(i + j) % 10}`) };
      const count = 1 + Math.floor(next() * 64);
      const found = blocked.nearest(query, filter, count);
      expect(found).toHaveLength(count);
      expect(found).toEqual(whole.nearest(query, filter, count));
      expect(found.every((rowid) => live.has(rowid))).toBe(true);
    }
    expect(blocked.size).toBe(live.size);
  });

  it('keeps its scratch to one block however many rows a filter lets through', () => {
    blocked.nearest(vec(), { repo: 'r' }, 32);
    expect((blocked as unknown as { scratch: Int8Array }).scratch.byteLength).toBeLessThanOrEqual(dim * 37);
  });
});

describe('path scope', () => {
  it('normalises the request scope and matches whole path segments', () => {
    expect(normalizePathPrefix(' ./src\\ui//primitives/ ')).toBe('src/ui/primitives');
    expect(normalizePathPrefix('/')).toBeNull();
    expect(normalizePathPrefix(null)).toBeNull();
    expect(matchesPathPrefix('src/ui/button.ts', 'src/ui')).toBe(true);
    expect(matchesPathPrefix('src/ui', 'src/ui')).toBe(true);
    expect(matchesPathPrefix('src/uikit/x.ts', 'src/ui')).toBe(false);
    expect(matchesPathPrefix('src', 'src/ui')).toBe(false);
    expect(pathPrefixesOf('src/ui/button.ts')).toEqual(['src', 'src/ui', 'src/ui/button.ts']);
  });
});

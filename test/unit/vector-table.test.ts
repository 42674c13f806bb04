import { matchesPathPrefix, normalizePathPrefix, pathPrefixesOf } from '../../src/retrieval/chunk-filter';
import { seededRandom as random } from '../../src/domain/seeded-random';
import type { ChunkFilter, ChunkPayload } from '../../src/retrieval/vector-store.port';
import { MemoryTable } from '../support/memory-table';

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

describe('VectorTable search (int8 scan, exact ranking)', () => {
  const dim = 37; // not a multiple of the unrolled loop's 4
  const next = random(7);
  const vec = () => Float32Array.from({ length: dim }, () => next() * 2 - 1);
  const rows = Array.from({ length: 500 }, (_, i) => ({
    id: `c${i}`,
    vector: vec(),
    payload: payload(`src/${['ui', 'ui/primitives', 'uikit', 'api'][i % 4]}/f${i}.ts`, i % 3 === 0 ? 'acme/web' : 'acme/api', i % 5 === 0 ? null : i % 2 ? 'typescript' : 'css'),
  }));
  const table = new MemoryTable(dim);
  table.upsert(rows);

  const reference = (q: Float32Array, keep: (p: ChunkPayload) => boolean, k: number) =>
    rows
      .filter((r) => keep(r.payload))
      .map((r) => ({ id: r.id, score: cosine(q, r.vector) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k);

  it('returns exactly the best cosine matches, best first, with float32 scores and the stored payload', () => {
    for (let trial = 0; trial < 20; trial++) {
      const q = vec();
      const got = table.search(q, {}, 10);
      const want = reference(q, () => true, 10);
      expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
      got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
      expect(got[0]!.payload).toEqual(rows.find((r) => r.id === got[0]!.id)!.payload);
    }
  });

  it('applies repo, language and path filters before ranking', () => {
    const q = vec();
    const cases: [ChunkFilter, (p: ChunkPayload) => boolean][] = [
      [{ repo: 'acme/web' }, (p) => p.repo === 'acme/web'],
      [{ language: 'css' }, (p) => p.language === 'css'],
      [{ repo: 'acme/api', language: 'typescript', pathPrefix: 'src/ui' }, (p) => p.repo === 'acme/api' && p.language === 'typescript' && p.path.startsWith('src/ui/')],
      [{ pathPrefix: './src/ui/primitives/' }, (p) => p.path.startsWith('src/ui/primitives/')],
    ];
    for (const [filter, keep] of cases) {
      const got = table.search(q, filter, 15).map((h) => h.id);
      expect(got).toEqual(reference(q, keep, 15).map((h) => h.id));
      expect(got.length).toBe(15);
    }
    expect(table.search(q, { pathPrefix: 'src/ui' }, 500).some((h) => h.payload.path.startsWith('src/uikit/'))).toBe(false);
    expect(table.search(q, { repo: 'unknown/repo' }, 5)).toEqual([]);
    expect(table.search(q, { language: 'cobol' }, 5)).toEqual([]);
  });

  it('finds every row a narrow filter lets through, however far from the query, and nothing else', () => {
    const big = new MemoryTable(16);
    const near = Float32Array.from({ length: 16 }, (_, j) => (j === 0 ? 1 : 0));
    // 3,000 rows close to the query, and 5 rows of one file pointing the other way.
    big.upsert(Array.from({ length: 3000 }, (_, i) => ({ id: `n${i}`, vector: Float32Array.from(near, (x) => x + next() * 0.1), payload: payload(`src/near/f${i}.ts`) })));
    big.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `far${i}`, vector: Float32Array.from(near, (x) => -x + next() * 0.1), payload: payload('src/far/only.ts') })));
    const hits = big.search(near, { pathPrefix: 'src/far' }, 8);
    expect(hits.map((h) => h.id).sort()).toEqual(['far0', 'far1', 'far2', 'far3', 'far4']);
    expect(big.search(near, { pathPrefix: 'src/far', language: 'css' }, 8)).toEqual([]);
    expect(big.search(near, {}, 8).every((h) => h.id.startsWith('n'))).toBe(true);
  });

  it('keeps results right through updates, deletions and moved lines', () => {
    const t = new MemoryTable(3);
    t.upsert([
      { id: 'a', vector: Float32Array.of(1, 0, 0), payload: payload('a.ts') },
      { id: 'b', vector: Float32Array.of(0, 1, 0), payload: payload('b.ts') },
      { id: 'c', vector: Float32Array.of(0, 0, 5), payload: payload('c.ts') },
    ]);
    expect(t.search(Float32Array.of(0, 0, 1), {}, 1)).toEqual([{ id: 'c', score: 1, payload: payload('c.ts') }]);
    t.remove('a');
    expect(t.table.remove('a')).toBe(false);
    t.upsert([{ id: 'b', vector: Float32Array.of(0, 0, 1), payload: payload('b2.ts') }]);
    t.place('new-file-hash', [{ id: 'c', startLine: 41, endLine: 80 }]);
    expect(t.table.size).toBe(2);
    expect(t.search(Float32Array.of(0, 0, 1), {}, 5).map((h) => [h.id, h.payload.path, h.payload.fileHash, h.payload.startLine, h.payload.endLine])).toEqual([
      ['c', 'c.ts', 'new-file-hash', 41, 80],
      ['b', 'b2.ts', 'f', 1, 10],
    ]);
    expect(t.search(Float32Array.of(1, 0, 0), {}, 5).map((h) => h.id).sort()).toEqual(['b', 'c']);
    // A deleted slot is reused by the next new row without disturbing the others.
    t.upsert([{ id: 'd', vector: Float32Array.of(1, 0, 0), payload: payload('d.ts') }]);
    expect(t.search(Float32Array.of(1, 0, 0), {}, 1)[0]!.id).toBe('d');
    expect(t.table.list('acme/api').map((c) => [c.id, c.fileHash]).sort()).toEqual([
      ['b', 'f'],
      ['c', 'new-file-hash'],
      ['d', 'f'],
    ]);
    expect(() => t.search(Float32Array.of(1, 0), {}, 1)).toThrow(RangeError);
  });

  it('keeps recall@8 of 1 against an exact scan on clustered, anisotropic vectors after heavy churn', () => {
    const d = 256;
    const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: d }, () => next() - 0.5));
    const scale = Float32Array.from({ length: d }, () => Math.exp(next() - 0.5));
    const sample = (c: number) => Float32Array.from(centres[c]!, (x, j) => (0.4 + x + (next() - 0.5) * 0.6) * scale[j]!);
    const t = new MemoryTable(d);
    const live = new Map<string, Float32Array>();
    const put = (ids: string[], centre: (i: number) => number) => {
      const rows = ids.map((id, i) => ({ id, vector: sample(centre(i)), payload: payload(`src/${id}.ts`) }));
      t.upsert(rows);
      for (const r of rows) live.set(r.id, r.vector);
    };
    put(Array.from({ length: 3000 }, (_, i) => `r${i}`), (i) => i % 20);
    // Replace a third, delete a sixth, add a tenth.
    put(Array.from({ length: 1000 }, (_, i) => `r${i * 3}`), (i) => (i + 7) % 20);
    const doomed = Array.from({ length: 500 }, (_, i) => `r${i * 6 + 1}`);
    t.remove(...doomed);
    for (const id of doomed) live.delete(id);
    // New rows take the freed slots.
    put(Array.from({ length: 300 }, (_, i) => `new${i}`), (i) => (i * 3) % 20);
    let hits = 0;
    for (let trial = 0; trial < 40; trial++) {
      const q = sample(trial % 20);
      const want = [...live].map(([id, v]) => ({ id, score: cosine(q, v) })).sort((a, b) => b.score - a.score).slice(0, 8);
      const got = new Set(t.search(q, {}, 8).map((h) => h.id));
      hits += want.filter((w) => got.has(w.id)).length;
    }
    expect(hits / (40 * 8)).toBe(1);
    expect(t.table.size).toBe(live.size);
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

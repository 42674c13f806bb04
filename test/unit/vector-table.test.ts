import { matchesPathPrefix, normalizePathPrefix, pathPrefixesOf } from '../../src/retrieval/chunk-filter';
import { seededRandom as random } from '../../src/domain/seeded-random';
import type { ChunkPayload } from '../../src/retrieval/vector-store.port';
import { VectorTable } from '../../src/retrieval/vector-table';

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

describe('VectorTable search', () => {
  const dim = 37; // not a multiple of the unrolled loop's 4
  const next = random(7);
  const vec = () => Float32Array.from({ length: dim }, () => next() * 2 - 1);
  const rows = Array.from({ length: 500 }, (_, i) => ({
    id: `c${i}`,
    vector: vec(),
    payload: payload(`src/${['ui', 'ui/primitives', 'uikit', 'api'][i % 4]}/f${i}.ts`, i % 3 === 0 ? 'acme/web' : 'acme/api', i % 5 === 0 ? null : i % 2 ? 'typescript' : 'css'),
  }));
  const table = new VectorTable(dim, 8);
  for (const r of rows) table.upsert(r.id, r.vector, r.payload);

  const reference = (q: Float32Array, keep: (p: ChunkPayload) => boolean, k: number) =>
    rows
      .filter((r) => keep(r.payload))
      .map((r) => ({ id: r.id, score: cosine(q, r.vector) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k);

  it('returns exactly the best cosine matches, best first', () => {
    for (let trial = 0; trial < 20; trial++) {
      const q = vec();
      const got = table.search(q, {}, 10);
      const want = reference(q, () => true, 10);
      expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
      got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 5));
    }
  });

  it('applies repo, language and path filters before ranking', () => {
    const q = vec();
    const cases: [Parameters<VectorTable['search']>[1], (p: ChunkPayload) => boolean][] = [
      [{ repo: 'acme/web' }, (p) => p.repo === 'acme/web'],
      [{ language: 'css' }, (p) => p.language === 'css'],
      [{ repo: 'acme/api', language: 'typescript', pathPrefix: 'src/ui' }, (p) => p.repo === 'acme/api' && p.language === 'typescript' && (p.path.startsWith('src/ui/'))],
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

  it('keeps results right through updates and deletions', () => {
    const t = new VectorTable(3, 1);
    t.upsert('a', Float32Array.of(1, 0, 0), payload('a.ts'));
    t.upsert('b', Float32Array.of(0, 1, 0), payload('b.ts'));
    t.upsert('c', Float32Array.of(0, 0, 5), payload('c.ts'));
    expect(t.search(Float32Array.of(0, 0, 1), {}, 1)).toEqual([{ id: 'c', score: 1, payload: payload('c.ts') }]);
    expect(t.remove('a')).toBe(true);
    expect(t.remove('a')).toBe(false);
    t.upsert('b', Float32Array.of(0, 0, 1), payload('b2.ts'));
    t.setFileHash('c', 'new-file-hash');
    expect(t.size).toBe(2);
    expect(t.search(Float32Array.of(0, 0, 1), {}, 5).map((h) => [h.id, h.payload.path, h.payload.fileHash])).toEqual([
      ['c', 'c.ts', 'new-file-hash'],
      ['b', 'b2.ts', 'f'],
    ]);
    expect(t.list('acme/api').map((c) => c.id).sort()).toEqual(['b', 'c']);
    expect(() => t.search(Float32Array.of(1, 0), {}, 1)).toThrow(RangeError);
    expect(() => t.upsert('d', Float32Array.of(1, 0), payload('d.ts'))).toThrow(RangeError);
  });
});

describe('VectorTable rows', () => {
  it('hands back every stored vector, across staging and growth, after updates and removals', () => {
    const next = random(3);
    const t = new VectorTable(5, 2);
    const stored = new Map<string, Float32Array>();
    for (let i = 0; i < 300; i++) {
      const v = Float32Array.from({ length: 5 }, () => next() - 0.5);
      t.upsert(`r${i % 250}`, v, payload(`f${i % 250}.ts`));
      stored.set(`r${i % 250}`, v);
    }
    for (let i = 0; i < 250; i += 3) {
      t.remove(`r${i}`);
      stored.delete(`r${i}`);
    }
    const rows = [...t.rows()];
    expect(rows.map((r) => r.id).sort()).toEqual([...stored.keys()].sort());
    for (const row of rows) {
      const want = stored.get(row.id)!;
      const norm = Math.hypot(...want);
      row.vector.forEach((x, j) => expect(x).toBeCloseTo(want[j]! / norm, 6));
    }
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

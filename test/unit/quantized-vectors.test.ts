import { seededRandom } from '../../src/domain/seeded-random';
import { QuantizedVectors } from '../../src/retrieval/quantized-vectors';

describe('QuantizedVectors: filtered searches in bounded blocks', () => {
  const dim = 48;
  const next = seededRandom(11);
  const vec = () => Float32Array.from({ length: dim }, () => next() * 2 - 1);
  const rows = 3000;
  // 37 rows a block: a filter letting most rows through is scanned in dozens of blocks.
  const blocked = new QuantizedVectors(dim, dim * 37);
  const whole = new QuantizedVectors(dim, Number.MAX_SAFE_INTEGER);
  for (let slot = 0; slot < rows; slot++) {
    const v = vec();
    blocked.set(slot, v);
    whole.set(slot, v);
  }
  // Holes and moved rows, as removals leave them.
  for (let slot = 0; slot < rows; slot += 7) {
    blocked.remove(slot);
    whole.remove(slot);
  }
  const live = Array.from({ length: rows }, (_, slot) => slot).filter((slot) => slot % 7 !== 0);

  it('finds the same nearest rows, in the same order, as one scan of the whole subset', () => {
    for (let i = 0; i < 40; i++) {
      const query = vec();
      const subset = Int32Array.from(live.filter(() => next() < (i % 2 ? 0.9 : 0.2)));
      const count = 1 + Math.floor(next() * 64);
      const found = blocked.search(query, count, subset);
      expect(found).toHaveLength(Math.min(count, subset.length));
      expect(found).toEqual(whole.search(query, count, subset));
      expect(found.every((slot) => slot % 7 !== 0)).toBe(true);
    }
  });

  it('keeps its scratch to one block however many rows a filter lets through', () => {
    blocked.search(vec(), 32, Int32Array.from(live));
    expect((blocked as unknown as { scratch: Int8Array }).scratch.byteLength).toBeLessThanOrEqual(dim * 37);
  });

  it('makes room for a reserved number of rows at once and keeps every vector across later growth', () => {
    const grown = new QuantizedVectors(dim);
    grown.reserve(5000);
    const vectors = Array.from({ length: 6200 }, vec);
    vectors.forEach((v, slot) => grown.set(slot, v));
    expect(grown.size).toBe(6200);
    // Every row still finds itself first.
    for (const slot of [0, 4999, 5000, 6199]) expect(grown.search(vectors[slot]!, 1, null)).toEqual([slot]);
  });
});

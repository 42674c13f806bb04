import { IdIndex } from '../../src/retrieval/id-index';

/** A small deterministic generator, so a failure replays. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('IdIndex (the embedded index chunk ids, off the JS heap)', () => {
  it('agrees with a Map through 20,000 random upserts and deletes, across table growth and buffer packing', () => {
    const next = random(7);
    const index = new IdIndex();
    const model = new Map<string, number>();
    const free: number[] = [];
    let highWater = 0;
    // Few distinct ids, so most operations hit an id that was indexed, deleted, or indexed again.
    const idOf = (n: number) => (n % 3 === 0 ? `chunk-${n}-ü€-${'x'.repeat(n % 40)}` : `00000000-0000-5000-8000-${n.toString(16).padStart(12, '0')}`);
    for (let op = 0; op < 20_000; op++) {
      const id = idOf(Math.floor(next() * 6_000));
      if (next() < 0.35) {
        expect(index.delete(id)).toBe(model.get(id));
        const slot = model.get(id);
        if (slot !== undefined) free.push(slot);
        model.delete(id);
      } else if (!model.has(id)) {
        const slot = free.pop() ?? highWater++;
        index.set(id, slot);
        model.set(id, slot);
      }
      expect(index.get(id)).toBe(model.get(id));
    }
    expect(index.size).toBe(model.size);
    for (const [id, slot] of model) {
      expect(index.get(id)).toBe(slot);
      expect(index.idOf(slot)).toBe(id);
    }
    expect(index.slots()).toEqual([...model.values()].sort((a, b) => a - b));
    for (const slot of free) expect(index.hasSlot(slot)).toBe(false);
  });

  it('tells apart ids that share a prefix or differ only in length, and takes the empty id', () => {
    const index = new IdIndex();
    ['a', 'ab', 'abc', '', 'é', 'e\u0301'].forEach((id, slot) => index.set(id, slot));
    expect(['a', 'ab', 'abc', '', 'é', 'e\u0301'].map((id) => index.get(id))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(index.get('abcd')).toBeUndefined();
    expect(index.idOf(4)).toBe('é');
    expect(index.delete('ab')).toBe(1);
    expect(index.get('abc')).toBe(2);
    expect(index.get('ab')).toBeUndefined();
    expect(() => index.idOf(1)).toThrow(RangeError);
    expect(index.size).toBe(5);
  });

  it('keeps its buffer to the live ids when the same few ids are replaced over and over', () => {
    const index = new IdIndex();
    const id = (n: number) => `${n % 100}-${'p'.repeat(200)}`;
    for (let n = 0; n < 100; n++) index.set(id(n), n);
    const buffer = (index as unknown as { bytes: Uint8Array }).bytes;
    for (let n = 100; n < 20_000; n++) {
      const slot = index.delete(id(n))!;
      index.set(id(n), slot);
    }
    expect(index.size).toBe(100);
    expect((index as unknown as { bytes: Uint8Array }).bytes.length).toBe(buffer.length);
    expect(index.idOf(index.get(id(42))!)).toBe(id(42));
  });
});

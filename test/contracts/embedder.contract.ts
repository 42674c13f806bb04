import type { Embedder } from '../../src/retrieval/embedder.port';

export interface EmbedderSubject {
  readonly embedder: Embedder;
  dispose(): Promise<void>;
}

const norm = (v: Float32Array) => Math.hypot(...v);
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

/** What ingest and retrieval need of every embedder (embedder.port.ts). */
export function embedderContract(open: () => Promise<EmbedderSubject>): void {
  let subject: EmbedderSubject;
  let embedder: Embedder;
  beforeAll(async () => {
    subject = await open();
    embedder = subject.embedder;
  });
  afterAll(() => subject.dispose());

  it('answers one unit vector of its dimension per text, in input order, over more texts than one batch', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `function handler${i}() { return ${i}; }`);
    const vectors = await embedder.embed(texts, 'document');
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v).toHaveLength(embedder.dimension);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    const [again] = await embedder.embed([texts[137]!], 'document');
    expect(cosine(again!, vectors[137]!)).toBeCloseTo(1, 5);
    expect(cosine(vectors[137]!, vectors[12]!)).toBeLessThan(0.9999);
  });

  it('names its vector space with a stable id', async () => {
    expect(embedder.id).toMatch(/^[a-z0-9][a-z0-9._-]*$/i);
    expect(embedder.dimension).toBeGreaterThan(0);
    expect((await embedder.embed(['retry policy'], 'query'))[0]).toHaveLength(embedder.dimension);
  });
}

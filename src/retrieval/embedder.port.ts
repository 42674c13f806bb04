/**
 * Port: turns text into vectors. One collection's vectors always come from one embedder,
 * so `id` and `dimension` are recorded with the collection and checked on every use.
 */
export interface Embedder {
  /** Stable name of the vector space, e.g. `local-hash-v1` or `openai-text-embedding-3-small`. */
  readonly id: string;
  readonly dimension: number;
  /**
   * One L2-normalised vector per text, in order. `query` texts are what a user asks,
   * `document` texts are indexed chunks; an embedder may treat them differently.
   */
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
}

export type EmbeddingKind = 'query' | 'document';

/** Scales a vector to unit length in place; a zero vector stays zero. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
  return vector;
}

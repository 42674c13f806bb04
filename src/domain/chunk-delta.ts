import type { ChunkRef } from './turn';

const keyOf = (ref: Pick<ChunkRef, 'chunkId' | 'contentHash'>): string => `${ref.chunkId}\u0000${ref.contentHash}`;

/**
 * Spec 001 sections 3.2 and 7.3: retrieval runs on every turn, but only snippets the live
 * chain has not already carried are sent again. A chunk whose text changed (new hash) is new.
 * Duplicates within one retrieval are sent once.
 */
export function newSnippets<T extends { readonly ref: ChunkRef }>(retrieved: readonly T[], sentInChain: Iterable<ChunkRef>): T[] {
  if (retrieved.length === 0) return [];
  const sent = new Set<string>();
  for (const ref of sentInChain) sent.add(keyOf(ref));
  const fresh: T[] = [];
  for (const chunk of retrieved) {
    const key = keyOf(chunk.ref);
    if (sent.has(key)) continue;
    sent.add(key);
    fresh.push(chunk);
  }
  return fresh;
}

/** Every chunk the turns of a chain recorded: what the model has already seen (walked only when something was retrieved). */
export function* chunksOfChain(links: readonly { readonly chunkRefs: readonly ChunkRef[] }[]): Iterable<ChunkRef> {
  for (const link of links) yield* link.chunkRefs;
}

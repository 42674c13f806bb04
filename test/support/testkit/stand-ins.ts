import type { ChunkRef } from '../../../src/domain/turn';
import type { RetrievalRequest, RetrievedChunk, Retriever } from '../../../src/retrieval/retrieval.port';

/** A clock the test moves forward (chain expiry, leases); real time keeps running underneath. */
export class TestClock {
  private offsetMs = 0;
  readonly now = (): Date => new Date(Date.now() + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** Retrieval as the test scripts it, remembering every request. */
export class ScriptedRetriever implements Retriever {
  chunks: RetrievedChunk[] = [];
  failWith: Error | null = null;
  readonly requests: RetrievalRequest[] = [];
  async retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]> {
    this.requests.push(request);
    if (this.failWith) throw this.failWith;
    return this.chunks;
  }
}

export const chunk = (id: string, text = `text of ${id}`, hash = `hash-${id}`): RetrievedChunk => ({
  ref: { chunkId: id, path: `src/${id}.ts`, startLine: 1, endLine: 20, contentHash: hash, score: 0.8 } satisfies ChunkRef,
  text,
  language: 'typescript',
});

export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

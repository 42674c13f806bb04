import { planActiveFiles, sha256Hex } from '../../src/domain/active-files';
import { checkFollowsTurn } from '../../src/domain/follow-on';
import { resolveLocalEdits } from '../../src/domain/local-edits';
import { parseRetrievalPathPrefixes } from '../../src/domain/retrieval-scope';
import type { ChunkRef } from '../../src/domain/turn';
import { selectExchanges } from '../../src/orchestrator/chain-preload';
import { toQdrantFilter } from '../../src/retrieval/qdrant-vector-store.adapter';

const ref = (path: string, id = path): { ref: ChunkRef } => ({ ref: { chunkId: id, path, startLine: 1, endLine: 5, contentHash: `h-${id}`, score: 0.5 } });

describe('local edits win (issue 10 item 2)', () => {
  it('skips snippets of files the model holds, whatever the path spelling, and keeps the rest in order', () => {
    const { send, skipped } = resolveLocalEdits([ref('src/a.ts'), ref('./src/b.ts'), ref('src/c.ts')], new Set(['src/a.ts', 'src/b.ts']));
    expect(send.map((s) => s.ref.chunkId)).toEqual(['src/c.ts']);
    expect(skipped).toEqual([
      { chunkId: 'src/a.ts', path: 'src/a.ts', startLine: 1, endLine: 5, contentHash: 'h-src/a.ts', reason: 'ACTIVE_FILE_IS_CURRENT' },
      { chunkId: './src/b.ts', path: './src/b.ts', startLine: 1, endLine: 5, contentHash: 'h-./src/b.ts', reason: 'ACTIVE_FILE_IS_CURRENT' },
    ]);
  });
});

describe('retrieval scope (issue 10 item 3)', () => {
  it('normalises prefixes to whole segments, drops duplicates, and treats none as no scope', () => {
    expect(parseRetrievalPathPrefixes(['./ui/primitives/', 'ui\\primitives', 'src'])).toEqual(['ui/primitives', 'src']);
    expect(parseRetrievalPathPrefixes([])).toBeNull();
    expect(parseRetrievalPathPrefixes(null)).toBeNull();
  });

  it('refuses empty, escaping and too many prefixes', () => {
    expect(() => parseRetrievalPathPrefixes(['./'])).toThrow('must name a path');
    expect(() => parseRetrievalPathPrefixes(['a/../b'])).toThrow('".."');
    expect(() => parseRetrievalPathPrefixes(Array.from({ length: 21 }, (_, i) => `p${i}`))).toThrow('at most 20');
  });

  it('asks Qdrant for chunks under any prefix with one MatchAny on the pathPrefixes keyword field', () => {
    expect(toQdrantFilter({ repo: 'acme/api', pathPrefixes: ['./ui/', 'src/billing'] })).toEqual({
      must: [
        { key: 'repo', match: { value: 'acme/api' } },
        { key: 'pathPrefixes', match: { any: ['ui', 'src/billing'] } },
      ],
    });
    expect(toQdrantFilter({ pathPrefixes: [] })).toBeUndefined();
  });
});

describe('chain preload (issue 10 item 1)', () => {
  const exchange = (n: number, size: number) => ({ instruction: `i${n}`.padEnd(size, '.'), answer: `a${n}` });
  it('keeps the newest in full, older ones as summaries, and stops at the first that fits in neither form', () => {
    const newestFirst = [
      { full: exchange(4, 50), summary: exchange(4, 10) },
      { full: exchange(3, 500), summary: exchange(3, 10) },
      { full: null, summary: exchange(2, 10) },
      { full: null, summary: exchange(1, 500) },
      { full: null, summary: exchange(0, 5) },
    ];
    const kept = selectExchanges(newestFirst, 100);
    expect(kept.map((e) => [e.instruction.slice(0, 2), e.summarised])).toEqual([
      ['i2', true],
      ['i3', true],
      ['i4', false],
    ]);
  });
});

describe('follow-on turnId and metadata-only files (issue 10 item 7)', () => {
  it("accepts only the session's latest turn, and only once it has finished", () => {
    const history = [
      { id: 't1', status: 'COMPLETED' as const },
      { id: 't2', status: 'CANCELLED' as const },
    ];
    expect(() => checkFollowsTurn(history, 's', 't2')).not.toThrow();
    expect(() => checkFollowsTurn(history, 's', 't1')).toThrow(expect.objectContaining({ code: 'TURN_NOT_LATEST' }));
    expect(() => checkFollowsTurn([{ id: 't3', status: 'PENDING' }], 's', 't3')).toThrow(expect.objectContaining({ code: 'TURN_NOT_LATEST' }));
  });

  it('takes a file over 100 KB as path + contentHash + sizeBytes, and still wants the content of a small unknown one', () => {
    const history = { sentInChain: new Map<string, string>(), knownSizes: new Map<string, number>() };
    const hash = sha256Hex('big');
    const plan = planActiveFiles([{ path: 'big.bin', content: null, contentHash: hash, isTouched: true, sizeBytes: 200_000 }], history);
    expect(plan.files[0]).toMatchObject({ delivery: 'none', ref: { sizeBytes: 200_000, wasTooLargeToSend: true, wasSentToLLM: false } });
    expect(() => planActiveFiles([{ path: 's.ts', content: null, contentHash: hash, isTouched: true, sizeBytes: 100 }], history)).toThrow(
      'has no earlier version',
    );
    expect(() => planActiveFiles([{ path: 's.ts', content: 'abc', contentHash: null, isTouched: true, sizeBytes: 4 }], history)).toThrow(
      'sizeBytes of s.ts does not match',
    );
  });
});

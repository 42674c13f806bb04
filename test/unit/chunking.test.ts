import { chunkId, chunkLines, sha256 } from '../../src/retrieval/chunking';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('chunkLines', () => {
  it('cuts a file into overlapping line ranges that cover every line', () => {
    const chunks = chunkLines(`${numbered(130)}\n`, { maxLines: 60, overlapLines: 10, maxChars: 100_000 });
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 60],
      [51, 110],
      [101, 130],
    ]);
    expect(chunks[1]!.text.split('\n')[0]).toBe('line 51');
    expect(chunks[2]!.text.split('\n').at(-1)).toBe('line 130');
    expect(chunks[0]!.contentHash).toBe(sha256(chunks[0]!.text));
  });

  it('keeps a small file whole and drops ranges holding only whitespace', () => {
    expect(chunkLines('const a = 1;\r\nconst b = 2;\r\n').map((c) => [c.startLine, c.endLine, c.text])).toEqual([
      [1, 2, 'const a = 1;\nconst b = 2;'],
    ]);
    expect(chunkLines('\n\n   \n\t\n')).toEqual([]);
    expect(chunkLines('')).toEqual([]);
  });

  it('ends a chunk early at maxChars and cuts a single overlong line, still moving forward', () => {
    const long = 'x'.repeat(250);
    const chunks = chunkLines([long, 'short', long, long].join('\n'), { maxLines: 60, overlapLines: 10, maxChars: 100 });
    expect(chunks.every((c) => c.text.length <= 100)).toBe(true);
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
  });

  it('refuses settings that would never advance', () => {
    expect(() => chunkLines('a', { maxLines: 10, overlapLines: 10, maxChars: 100 })).toThrow(RangeError);
  });
});

describe('chunkId', () => {
  it('is a deterministic version-5 UUID of repo, path, range and content', () => {
    const id = chunkId('acme/api', 'src/a.ts', 1, 60, 'h');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chunkId('acme/api', 'src/a.ts', 1, 60, 'h')).toBe(id);
    for (const other of [
      chunkId('acme/web', 'src/a.ts', 1, 60, 'h'),
      chunkId('acme/api', 'src/b.ts', 1, 60, 'h'),
      chunkId('acme/api', 'src/a.ts', 2, 60, 'h'),
      chunkId('acme/api', 'src/a.ts', 1, 60, 'h2'),
    ]) {
      expect(other).not.toBe(id);
    }
  });
});

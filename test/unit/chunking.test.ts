import { chunkId, chunkLines, DEFAULT_CHUNKING, identifyChunks, sha256, type ChunkingOptions } from '../../src/retrieval/chunking';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');
/** Functions of 15 lines each (blank line included), separated by blank lines, like most code. */
const functions = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => [`export function f${from + i}(x: number) {`, ...Array.from({ length: 11 }, (_, j) => `  const v${j} = x * ${from + i + j};`), '  return x;', '}', ''].join('\n')).join('\n');
const UNLIMITED: ChunkingOptions = { ...DEFAULT_CHUNKING, maxChars: 100_000 };

/** Chunk texts of `after` that `before` did not have: what a re-ingest would embed. */
const changed = (before: string, after: string, options: ChunkingOptions = DEFAULT_CHUNKING) => {
  const old = new Set(chunkLines(before, options).map((c) => c.contentHash));
  return chunkLines(after, options).filter((c) => !old.has(c.contentHash));
};

describe('chunkLines', () => {
  it('covers every line with overlapping chunks of bounded size, each text exactly its lines', () => {
    const text = `${functions(40)}\n`;
    const lines = text.split('\n').slice(0, -1);
    const chunks = chunkLines(text, UNLIMITED);
    expect(chunks[0]!.startLine).toBe(1);
    expect(chunks.at(-1)!.endLine).toBe(lines.length);
    for (const [i, c] of chunks.entries()) {
      expect(c.endLine - c.startLine + 1).toBeLessThanOrEqual(UNLIMITED.maxLines);
      expect(c.text).toBe(lines.slice(c.startLine - 1, c.endLine).join('\n'));
      expect(c.contentHash).toBe(sha256(c.text));
      if (i > 0) {
        // Overlaps the previous chunk by up to overlapLines, and never skips a line.
        const overlap = chunks[i - 1]!.endLine - c.startLine + 1;
        expect(overlap).toBeGreaterThan(0);
        expect(overlap).toBeLessThanOrEqual(UNLIMITED.overlapLines);
      }
    }
  });

  it('ends chunks before top-level declarations when it can, so a function starts a chunk whole', () => {
    const chunks = chunkLines(`${functions(40)}\n`, UNLIMITED);
    // Every chunk but the last ends right before an `export function` line (a multiple of 15 lines).
    for (const c of chunks.slice(0, -1)) expect(c.endLine % 15).toBe(0);
  });

  it('re-chunks only around an edit: one line inserted at the top of a 2,000-line file changes one chunk', () => {
    const text = `${functions(143)}\n`;
    expect(text.split('\n').length).toBeGreaterThan(2000);
    const total = chunkLines(text).length;
    expect(total).toBeGreaterThan(40);
    expect(changed(text, `// header\n${text}`)).toHaveLength(1);
    // The same holds for text with no structure at all, where boundaries come from line hashes.
    const flat = `${numbered(2000)}\n`;
    expect(changed(flat, `line 0\n${flat}`).length).toBeLessThanOrEqual(2);
    // An edit in the middle touches the chunks holding that line only.
    const edited = text.replace('const v5 = x * 75;', 'const v5 = x * -1;');
    expect(changed(text, edited).length).toBeLessThanOrEqual(2);
    // A line deleted near the top, too.
    expect(changed(text, text.replace('  const v0 = x * 0;\n', '')).length).toBeLessThanOrEqual(2);
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
    const chunks = chunkLines([long, 'short', long, long].join('\n'), { maxLines: 60, overlapLines: 10, minLines: 30, maxChars: 100 });
    expect(chunks.every((c) => c.text.length <= 100)).toBe(true);
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    // Long lines leave boundaries room: inserting a line at the top still changes little.
    const wide = Array.from({ length: 600 }, (_, i) => `const value${i} = '${'y'.repeat(80 + (i % 7))}';`).join('\n');
    expect(changed(wide, `// x\n${wide}`).length).toBeLessThanOrEqual(2);
  });

  it('refuses settings that would never advance', () => {
    expect(() => chunkLines('a', { maxLines: 10, overlapLines: 10, minLines: 5, maxChars: 100 })).toThrow(RangeError);
    expect(() => chunkLines('a', { maxLines: 10, overlapLines: 2, minLines: 0, maxChars: 100 })).toThrow(RangeError);
  });
});

describe('chunk ids', () => {
  it('are deterministic version-5 UUIDs of repo, path, content and copy number, never of line numbers', () => {
    const id = chunkId('acme/api', 'src/a.ts', 'h', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chunkId('acme/api', 'src/a.ts', 'h', 0)).toBe(id);
    for (const other of [chunkId('acme/web', 'src/a.ts', 'h', 0), chunkId('acme/api', 'src/b.ts', 'h', 0), chunkId('acme/api', 'src/a.ts', 'h2', 0), chunkId('acme/api', 'src/a.ts', 'h', 1)]) {
      expect(other).not.toBe(id);
    }
  });

  it('stay unique when a file repeats a chunk verbatim, and stay the same for chunks that only moved', () => {
    const text = `${functions(2)}\n`.repeat(12);
    const ids = identifyChunks('r', 'gen.ts', chunkLines(text, UNLIMITED));
    expect(new Set(ids.map((c) => c.contentHash)).size).toBeLessThan(ids.length);
    expect(new Set(ids.map((c) => c.id)).size).toBe(ids.length);
    // Same content in another file: other ids.
    const elsewhere = identifyChunks('r', 'copy.ts', chunkLines(text, UNLIMITED));
    expect(elsewhere.some((c) => ids.some((d) => d.id === c.id))).toBe(false);
    // Inserting a line at the top keeps the ids of every chunk it did not touch, at new lines.
    const big = `${functions(143)}\n`;
    const before = identifyChunks('r', 'big.ts', chunkLines(big));
    const after = identifyChunks('r', 'big.ts', chunkLines(`// header\n${big}`));
    const kept = after.filter((c) => before.some((b) => b.id === c.id));
    expect(kept.length).toBe(after.length - 1);
    for (const c of kept) expect(c.startLine).toBe(before.find((b) => b.id === c.id)!.startLine + 1);
  });
});

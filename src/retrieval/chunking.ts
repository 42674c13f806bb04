import { createHash } from 'node:crypto';
import { fmix32 } from './hashing';

export interface ChunkingOptions {
  /** Lines per chunk at most, overlap included. */
  readonly maxLines: number;
  /** Lines a chunk repeats from the end of the previous one, so a definition cut at a boundary is whole in one of them. */
  readonly overlapLines: number;
  /** New lines (beyond the overlap) a chunk takes before a content boundary may end it. */
  readonly minLines: number;
  /** Characters per chunk at most (long lines, minified files); a single longer line is cut. */
  readonly maxChars: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { maxLines: 60, overlapLines: 10, minLines: 30, maxChars: 4000 };

export interface SourceChunk {
  /** 1-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
  readonly text: string;
  /** SHA-256 (hex) of `text`. */
  readonly contentHash: string;
}

/**
 * Cuts a file into overlapping chunks whose boundaries are chosen by the content around
 * them, not by line numbers: each chunk ends at the best-scoring boundary (see
 * boundaryScore) between its minimum and maximum size. Inserting or deleting a line moves
 * the boundaries near the edit only; a little further on both versions pick the same
 * boundary again, and from there chunks come out byte-identical, keeping their
 * content-derived ids and vectors. Ranges holding only whitespace are left out.
 */
export function chunkLines(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): SourceChunk[] {
  const { maxLines, overlapLines, minLines, maxChars } = options;
  if (maxLines < 1 || overlapLines < 0 || overlapLines >= maxLines || minLines < 1 || maxChars < 1) {
    throw new RangeError('chunking needs maxLines >= 1, 0 <= overlapLines < maxLines, minLines >= 1 and maxChars >= 1');
  }
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const chunks: SourceChunk[] = [];
  let start = 0;
  let previousStart = 0;
  while (start < lines.length) {
    // Overlap: at most half the previous chunk's new lines and a quarter of the characters.
    let from = start - Math.min(overlapLines, Math.floor((start - previousStart) / 2));
    let chars = lineChars(lines, from, start);
    while (from < start && chars > maxChars / 4) chars -= lines[from++]!.length + 1;
    const end = chooseEnd(lines, start, from, chars, options);
    const body = lines.slice(from, end).join('\n');
    const chunkText = body.length > maxChars ? body.slice(0, maxChars) : body;
    if (chunkText.trim() !== '') {
      chunks.push({ startLine: from + 1, endLine: end, text: chunkText, contentHash: sha256(chunkText) });
    }
    previousStart = start;
    start = end;
  }
  return chunks;
}

/** Where the chunk whose new lines begin at `start` (text from `from`, `chars` so far) ends, exclusive. */
function chooseEnd(lines: readonly string[], start: number, from: number, chars: number, options: ChunkingOptions): number {
  // The furthest end the line and character limits allow; always at least one new line.
  let limit = start + 1;
  let used = chars + lines[start]!.length;
  while (limit < lines.length && limit - from < options.maxLines) {
    const add = lines[limit]!.length + 1;
    if (used + add > options.maxChars) break;
    used += add;
    limit++;
  }
  // Boundaries count only past the minimum size, or past half the room when long lines leave little.
  const room = limit === lines.length ? Number.POSITIVE_INFINITY : limit - start;
  const earliest = start + Math.max(1, Math.min(options.minLines, Math.floor(room / 2)));
  let best = limit;
  let bestScore = -1;
  for (let i = earliest; i < limit; i++) {
    const score = boundaryScore(lines, i);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

/**
 * How good a place to cut before line i is, from lines i-1 and i alone: any column-0 line
 * after a blank line (a declaration, a heading, a doc comment; not a closing bracket)
 * beats every other line; ties within each kind go to the larger hash of the two lines,
 * which is what makes the choice depend on content and not on where the chunk started.
 */
function boundaryScore(lines: readonly string[], i: number): number {
  const line = lines[i]!;
  const previous = lines[i - 1]!;
  const first = line.charCodeAt(0);
  const structural =
    line.trim() !== '' && !isSpace(first) && first !== 0x7d && first !== 0x29 && first !== 0x5d && previous.trim() === '';
  let h = 2166136261;
  for (const s of [previous, '\n', line]) {
    for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 16777619);
  }
  return (structural ? 2 ** 32 : 0) + fmix32(h);
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c;

function lineChars(lines: readonly string[], from: number, to: number): number {
  let chars = 0;
  for (let i = from; i < to; i++) chars += lines[i]!.length + 1;
  return chars;
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** RFC 4122 namespace of this gateway's chunk ids. */
const CHUNK_NAMESPACE = Buffer.from('6f1c3a52d0e94c1b9a8e2f7d5b4c3a10', 'hex');

/**
 * Deterministic chunk id: a UUID (version 5) of repo, path, content hash and which copy of
 * that content in the file it is (0 for the first; a file may repeat a chunk verbatim).
 * Line numbers are left out on purpose: a chunk that only moved keeps its id, so turns that
 * cited it still point at a live chunk and its vector is not computed again. Qdrant accepts
 * UUIDs as point ids.
 */
export function chunkId(repo: string, path: string, contentHash: string, copy: number): string {
  const digest = createHash('sha1').update(CHUNK_NAMESPACE).update(`${repo}\u0000${path}\u0000${contentHash}\u0000${copy}`).digest();
  digest[6] = (digest[6]! & 0x0f) | 0x50;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Every chunk of one file with its id: copies of one content are numbered in file order. */
export function identifyChunks(repo: string, path: string, chunks: readonly SourceChunk[]): (SourceChunk & { readonly id: string })[] {
  const copies = new Map<string, number>();
  return chunks.map((chunk) => {
    const copy = copies.get(chunk.contentHash) ?? 0;
    copies.set(chunk.contentHash, copy + 1);
    return { ...chunk, id: chunkId(repo, path, chunk.contentHash, copy) };
  });
}

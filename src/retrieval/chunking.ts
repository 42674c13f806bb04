import { createHash } from 'node:crypto';

export interface ChunkingOptions {
  /** Lines per chunk at most. */
  readonly maxLines: number;
  /** Lines a chunk shares with the previous one, so a definition cut at a boundary is whole in one of them. */
  readonly overlapLines: number;
  /** Characters per chunk at most (long lines, minified files); a single longer line is cut. */
  readonly maxChars: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { maxLines: 60, overlapLines: 10, maxChars: 4000 };

export interface SourceChunk {
  /** 1-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
  readonly text: string;
  /** SHA-256 (hex) of `text`. */
  readonly contentHash: string;
}

/** Cuts a file into overlapping line ranges; ranges holding only whitespace are left out. */
export function chunkLines(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): SourceChunk[] {
  if (options.maxLines < 1 || options.overlapLines < 0 || options.overlapLines >= options.maxLines || options.maxChars < 1) {
    throw new RangeError('chunking needs maxLines >= 1, 0 <= overlapLines < maxLines and maxChars >= 1');
  }
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const chunks: SourceChunk[] = [];
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let chars = 0;
    while (end < lines.length && end - start < options.maxLines) {
      const add = lines[end].length + (end > start ? 1 : 0);
      if (end > start && chars + add > options.maxChars) break;
      chars += add;
      end++;
    }
    const body = lines.slice(start, end).join('\n');
    const chunkText = body.length > options.maxChars ? body.slice(0, options.maxChars) : body;
    if (chunkText.trim() !== '') {
      chunks.push({ startLine: start + 1, endLine: end, text: chunkText, contentHash: sha256(chunkText) });
    }
    if (end >= lines.length) break;
    // Overlap at most half a chunk, so chunks cut short by maxChars still move forward.
    start = end - Math.min(options.overlapLines, Math.floor((end - start) / 2));
  }
  return chunks;
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** RFC 4122 namespace of this gateway's chunk ids. */
const CHUNK_NAMESPACE = Buffer.from('6f1c3a52d0e94c1b9a8e2f7d5b4c3a10', 'hex');

/**
 * Deterministic chunk id: a UUID (version 5) of repo, path, line range and content hash.
 * Re-indexing unchanged code yields the same ids, so turns keep pointing at live chunks;
 * Qdrant accepts UUIDs as point ids.
 */
export function chunkId(repo: string, path: string, startLine: number, endLine: number, contentHash: string): string {
  const digest = createHash('sha1')
    .update(CHUNK_NAMESPACE)
    .update(`${repo}\u0000${path}\u0000${startLine}\u0000${endLine}\u0000${contentHash}`)
    .digest();
  digest[6] = (digest[6] & 0x0f) | 0x50;
  digest[8] = (digest[8] & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

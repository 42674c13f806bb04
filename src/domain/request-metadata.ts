/** Why a retrieved snippet was recorded but not sent to the model. */
export const SNIPPET_SKIP_REASONS = ['ACTIVE_FILE_IS_CURRENT'] as const;
export type SnippetSkipReason = (typeof SNIPPET_SKIP_REASONS)[number];

export interface SkippedSnippet {
  readonly chunkId: string;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly contentHash: string;
  readonly reason: SnippetSkipReason;
}

/**
 * Spec 001 section 10.2: request facts stored with a turn that are not chunks or files:
 * the retrieval scope the request asked for (request-only, never in the vector store) and
 * the snippets retrieved but left out.
 */
export interface TurnRequestMetadata {
  /** Path prefixes retrieval was restricted to; null when it searched everything. */
  readonly retrievalPathPrefixes: readonly string[] | null;
  readonly skippedSnippets: readonly SkippedSnippet[];
}

export const NO_REQUEST_METADATA: TurnRequestMetadata = { retrievalPathPrefixes: null, skippedSnippets: [] };

export const skippedSnippetOf = (ref: Omit<SkippedSnippet, 'reason'>, reason: SnippetSkipReason): SkippedSnippet => ({
  chunkId: ref.chunkId,
  path: ref.path,
  startLine: ref.startLine,
  endLine: ref.endLine,
  contentHash: ref.contentHash,
  reason,
});

import { skippedSnippetOf, type SkippedSnippet } from './request-metadata';
import type { ChunkRef } from './turn';

/**
 * Spec 001 section 4.2 (resolve conflicts between server-indexed and local-edited
 * versions): the model holds the developer's version of every active file of the live chain
 * (sent with this request, or sent earlier in the chain and unchanged), so an indexed
 * snippet of the same path is stale at best. Such snippets are not sent; they are recorded
 * as skipped.
 */
export function resolveLocalEdits<T extends { readonly ref: ChunkRef }>(
  snippets: readonly T[],
  heldPaths: ReadonlySet<string>,
): { readonly send: T[]; readonly skipped: SkippedSnippet[] } {
  const send: T[] = [];
  const skipped: SkippedSnippet[] = [];
  for (const snippet of snippets) {
    if (heldPaths.has(normalised(snippet.ref.path))) skipped.push(skippedSnippetOf(snippet.ref, 'ACTIVE_FILE_IS_CURRENT'));
    else send.push(snippet);
  }
  return { send, skipped };
}

/** Index paths and active file paths are both workspace-relative; "./" and backslashes must not defeat the match. */
const normalised = (path: string): string => path.replace(/\\/g, '/').replace(/\/{2,}/g, '/').replace(/^(\.\/)+/, '');

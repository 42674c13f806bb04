import { badInput } from './errors';
import { requireWellFormed } from './validation';

export const MAX_RETRIEVAL_PATH_PREFIXES = 20;
const MAX_PREFIX_LENGTH = 1024;

/**
 * Spec 001 section 4.2: a request may restrict retrieval to parts of the tree
 * (`retrievalPathPrefixes`). Request-only: stored with the turn, never in the vector store.
 * Each prefix is a workspace-relative path or directory, matched on whole segments; null
 * (or an empty list) searches everything.
 */
export function parseRetrievalPathPrefixes(raw: readonly string[] | null | undefined): string[] | null {
  if (raw == null) return null;
  if (raw.length > MAX_RETRIEVAL_PATH_PREFIXES) {
    throw badInput(`at most ${MAX_RETRIEVAL_PATH_PREFIXES} retrievalPathPrefixes`, { field: 'retrievalPathPrefixes' });
  }
  const prefixes = new Set<string>();
  for (const value of raw) {
    if (value.length > MAX_PREFIX_LENGTH || value.includes('\0')) {
      throw badInput(`a retrieval path prefix must be at most ${MAX_PREFIX_LENGTH} characters`, { field: 'retrievalPathPrefixes' });
    }
    requireWellFormed('retrievalPathPrefixes', value);
    const segments = value.trim().replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.');
    if (segments.length === 0) throw badInput('a retrieval path prefix must name a path', { field: 'retrievalPathPrefixes' });
    if (segments.includes('..')) throw badInput('a retrieval path prefix must not contain ".."', { field: 'retrievalPathPrefixes' });
    prefixes.add(segments.join('/'));
  }
  return prefixes.size === 0 ? null : [...prefixes];
}

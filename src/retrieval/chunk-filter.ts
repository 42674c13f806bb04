/**
 * Path scoping shared by every vector store, so Qdrant and the embedded index agree: a
 * prefix matches whole path segments ("src/ui" matches "src/ui/button.ts" and "src/ui",
 * never "src/uikit/x.ts").
 */

/** Canonical form of a request's path scope; null when it scopes nothing. */
export function normalizePathPrefix(raw: string | null | undefined): string | null {
  if (raw == null) return null;
  const segments = raw
    .trim()
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  return segments.length === 0 ? null : segments.join('/');
}

export function matchesPathPrefix(path: string, prefix: string): boolean {
  return path.length === prefix.length
    ? path === prefix
    : path.length > prefix.length && path.charCodeAt(prefix.length) === 47 /* "/" */ && path.startsWith(prefix);
}

/** Every prefix a path matches: its directories and itself ("a", "a/b", "a/b/c.ts"). */
export function pathPrefixesOf(path: string): string[] {
  const segments = path.split('/');
  return segments.map((_, i) => segments.slice(0, i + 1).join('/'));
}

/** The canonical prefixes of a multi-prefix scope; null when it scopes nothing (null, or no usable prefix). */
export function normalizePathPrefixes(raw: readonly string[] | null | undefined): string[] | null {
  if (raw == null) return null;
  const prefixes = [...new Set(raw.map(normalizePathPrefix).filter((p): p is string => p !== null))];
  return prefixes.length === 0 ? null : prefixes;
}

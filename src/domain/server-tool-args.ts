/**
 * The arguments of the gateway's own tools, as the model sends them (JSON text). The model
 * is untrusted input: anything malformed becomes an error the model reads, never a crash.
 */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export interface WriteFileArgs {
  readonly path: string;
  readonly content: string;
}

export interface SearchCodeArgs {
  readonly query: string;
  readonly pathPrefix: string | null;
}

/** Largest file write_file stores (UTF-8 bytes). */
export const MAX_WRITE_FILE_BYTES = 1_000_000;
const MAX_PATH_CHARS = 512;
const MAX_QUERY_CHARS = 2_000;

const fail = (error: string): Parsed<never> => ({ ok: false, error });

function objectOf(argumentsJson: string): Parsed<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(argumentsJson);
  } catch {
    return fail('the arguments are not valid JSON');
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? { ok: true, value: value as Record<string, unknown> }
    : fail('the arguments must be a JSON object');
}

/**
 * A workspace-relative path: forward slashes, no empty, `.` or `..` segment, no leading
 * slash or drive, no control characters. The path only names the file; it is never joined
 * to a directory of the gateway's, but a path that climbs out is refused all the same.
 */
export function checkRelativePath(path: string, what = 'path'): string | null {
  if (path.length === 0) return `${what} must not be empty`;
  if (path.length > MAX_PATH_CHARS) return `${what} must be at most ${MAX_PATH_CHARS} characters`;
  if (/[\u0000-\u001f\u007f\\]/.test(path)) return `${what} must not contain control characters or backslashes`;
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return `${what} must be relative to the workspace`;
  const segments = path.split('/');
  if (segments.some((s) => s === '..' || s === '.')) return `${what} must not contain "." or ".." segments`;
  if (segments.slice(0, -1).some((s) => s === '') || segments.at(-1) === '') return `${what} must name a file, without empty segments`;
  return null;
}

export function parseWriteFileArgs(argumentsJson: string): Parsed<WriteFileArgs> {
  const args = objectOf(argumentsJson);
  if (!args.ok) return args;
  const { path, content } = args.value;
  if (typeof path !== 'string') return fail('path must be a string');
  if (typeof content !== 'string') return fail('content must be a string');
  const bad = checkRelativePath(path);
  if (bad) return fail(bad);
  const size = Buffer.byteLength(content, 'utf8');
  if (size > MAX_WRITE_FILE_BYTES) return fail(`content is ${size} bytes; write_file stores at most ${MAX_WRITE_FILE_BYTES} bytes`);
  return { ok: true, value: { path, content } };
}

export function parseSearchCodeArgs(argumentsJson: string): Parsed<SearchCodeArgs> {
  const args = objectOf(argumentsJson);
  if (!args.ok) return args;
  const { query, pathPrefix } = args.value;
  if (typeof query !== 'string' || query.trim().length === 0) return fail('query must be a non-empty string');
  if (query.length > MAX_QUERY_CHARS) return fail(`query must be at most ${MAX_QUERY_CHARS} characters`);
  if (pathPrefix === undefined || pathPrefix === null || pathPrefix === '') return { ok: true, value: { query, pathPrefix: null } };
  if (typeof pathPrefix !== 'string') return fail('pathPrefix must be a string');
  const prefix = pathPrefix.replace(/\/+$/, '');
  const bad = prefix.length === 0 ? null : checkRelativePath(prefix, 'pathPrefix');
  if (bad) return fail(bad);
  return { ok: true, value: { query, pathPrefix: prefix.length === 0 ? null : prefix } };
}

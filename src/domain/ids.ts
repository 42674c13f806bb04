import { badInput } from './errors';

/**
 * The one rule for an id that comes from outside (issue 36): a token's `sub` and `org`, a
 * GraphQL `ID`, an id in a REST body or a blob URL. 1 to 64 UTF-16 code units of
 * well-formed Unicode without control characters; compared byte for byte.
 *
 * Well-formed because MariaDB and SQLite store text as UTF-8, and a lone surrogate has no
 * UTF-8 form: the drivers write U+FFFD in its place, so `corp\ud800` would be stored, and
 * matched, as `corp\uFFFD`, another organisation's id. Control characters have no business in
 * an id and make logs ambiguous.
 */
export const MAX_ID_LENGTH = 64;

const CONTROL = /\p{Cc}/u;

/** Why `value` is not an id (a phrase to follow its name), or null when it is one. */
export function idProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters`;
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it contains an unpaired surrogate)';
  if (CONTROL.test(value)) return 'must not contain control characters';
  return null;
}

export const isId = (value: unknown): value is string => typeof value === 'string' && idProblem(value) === null;

/** `value` as an id, or BAD_USER_INPUT naming `field`. */
export function requireId(field: string, value: string): string {
  const problem = idProblem(value);
  if (problem) throw badInput(`${field} ${problem}`, { field });
  return value;
}

export const optionalId = (field: string, value: string | null | undefined): string | null =>
  value === null || value === undefined ? null : requireId(field, value);

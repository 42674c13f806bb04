import { badInput } from './errors';
import { MAX_ID_LENGTH } from './ids';

/** Field limits shared by the session rules and the context directory. */
export const LIMITS = {
  name: 200,
  key: 100,
  category: 100,
  description: 4000,
  id: MAX_ID_LENGTH,
  shortText: 200,
  search: 200,
  systemPrompt: 100_000,
  instruction: 1_000_000,
} as const;

export function requireText(field: string, value: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed.length === 0) throw badInput(`${field} must not be empty`, { field });
  return checkLength(field, trimmed, max);
}

export function optionalText(field: string, value: string | null | undefined, max: number): string | null {
  if (value === null || value === undefined) return null;
  return checkLength(field, value, max);
}

/**
 * Text the gateway stores must be well-formed Unicode: MariaDB and SQLite keep UTF-8, where
 * an unpaired surrogate has no form, so it would be stored as U+FFFD without a word and
 * read back as something the client never sent. It is refused instead.
 */
export function requireWellFormed(field: string, value: string): string {
  if (!value.isWellFormed()) throw badInput(`${field} must be well-formed Unicode (it contains an unpaired surrogate)`, { field });
  return value;
}

export const optionalWellFormed = (field: string, value: string | null | undefined): string | null =>
  value === null || value === undefined ? null : requireWellFormed(field, value);

function checkLength(field: string, value: string, max: number): string {
  if (value.length > max) throw badInput(`${field} must be at most ${max} characters`, { field });
  return requireWellFormed(field, value);
}

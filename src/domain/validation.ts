import { badInput } from './errors';

/** Field limits shared by the session rules and the context directory. */
export const LIMITS = {
  name: 200,
  key: 100,
  category: 100,
  description: 4000,
  id: 64,
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

function checkLength(field: string, value: string, max: number): string {
  if (value.length > max) throw badInput(`${field} must be at most ${max} characters`, { field });
  return value;
}

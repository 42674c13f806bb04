import { badInput } from './errors';

/**
 * Session search (issue 35), one rule for the list (a full-text index on MySQL/MariaDB and
 * SQLite) and the live feed: the search text's words, letters and digits, of at least
 * MIN_SEARCH_WORD characters (the shortest word MariaDB's full-text index keeps), each begin a
 * word of the session's name or description, in any case and with or without accents. "rate
 * lim" finds "Rate limiter review"; "limiter rate" too; "imiter" does not; "cafe" finds "Café".
 */
export const MIN_SEARCH_WORD = 3;

/** Letters and digits in a row: what both full-text parsers take for a word. */
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * Lower case without accents ("Café" is "cafe"), as both full-text indexes compare words:
 * FTS5's unicode61 tokenizer removes diacritics, MariaDB's utf8mb4_general_ci ignores them.
 */
export const foldSearchText = (text: string): string => text.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();

const wordsOf = (text: string): string[] => (foldSearchText(text).match(WORD) ?? []);

/** The words a search looks for; BAD_USER_INPUT when it has none long enough. */
export function searchWords(search: string): string[] {
  const words = [...new Set(wordsOf(search).filter((w) => w.length >= MIN_SEARCH_WORD))];
  if (words.length === 0) {
    throw badInput(`search needs a word of at least ${MIN_SEARCH_WORD} letters or digits`, { argument: 'search' });
  }
  return words;
}

/** Whether a session with this name and description matches the search's words. */
export function matchesSearch(words: readonly string[], name: string, description: string | null): boolean {
  const own = [...wordsOf(name), ...wordsOf(description ?? '')];
  return words.every((w) => own.some((o) => o.startsWith(w)));
}

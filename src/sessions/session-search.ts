import { searchWords } from '../domain/search-words';
import type { SessionFilter } from '../domain/session';
import type { Dialect } from '../persistence/dialect';
import type { Condition } from './session-query';

/**
 * How a search pages (issue 35). Walking the order's index and testing each row costs the rows
 * read until the page is full: about a page over the share of sessions that match, small when
 * the word is common. Driving the page from the full-text matches costs what all of them cost
 * (fetched, tested for visibility, sorted), small when the word is rare; and on InnoDB every
 * `MATCH` costs all of the word's matches in every org before any `LIMIT` applies (~2 µs each:
 * 220 ms for a word in 110,000 sessions), so nothing may ask the index first whether a word
 * is common. So a search walks first: the newest SEARCH_WALK_ROWS sessions of the caller's
 * range, testing each. They fill the page when the word is in more than about one session in
 * a hundred; when they end the range (a small org, an owner's sessions) they are the answer;
 * otherwise the word is rare there and the page is driven from its matches, few by then
 * (sessions/session-list.ts runs the steps). docs/performance.md has the figures.
 */
export const SEARCH_WALK_ROWS = 3_000;

/**
 * Rows on the far side of a cursor tested for a match before asking the full-text index: the
 * cursor's own session, a match when the page was read, is the first of them.
 */
export const SEARCH_PROBE_ROWS = 100;

/**
 * A search's count stops here ("100+", `totalCountIsLowerBound`). On MySQL/MariaDB it is counted
 * on a walk of the org's newest SEARCH_COUNT_ROWS sessions (stopping at the cap), which proves
 * "more than 100" for a word in more than one session in a hundred (one in thirty of a member's,
 * who sees about a third of them); rarer words are counted from their matches, fewer then.
 */
export const SEARCH_COUNT_CAP = 100;

/** The newest sessions of the range a search's count walks (MySQL/MariaDB). */
export const SEARCH_COUNT_ROWS = 10_000;

export const isSearch = (filter: SessionFilter): boolean => filter.search != null && filter.search !== '';

/**
 * The org's sessions the full-text index matches, driving the join (`m`, then the sessions as
 * `s`): the planners' own choice was to walk the org's index and test each row against the
 * matches, a scan of the org for a rare word.
 */
export function matchesFrom(dialect: Dialect, filter: SessionFilter): Condition {
  const words = searchWords(filter.search ?? '');
  if (dialect === 'sqlite') {
    return {
      sql:
        '(SELECT session_id FROM agent_session_search WHERE agent_session_search MATCH :search AND org_id = :callerOrg) m ' +
        'CROSS JOIN agent_sessions s ON s.id = m.session_id',
      params: { search: ftsQuery(words) },
    };
  }
  return {
    sql:
      '(SELECT ss.session_id FROM agent_session_search ss WHERE MATCH(ss.body) AGAINST(:search IN BOOLEAN MODE) AND ss.org_id = :callerOrg) m ' +
      'STRAIGHT_JOIN agent_sessions s ON s.id = m.session_id',
    params: { search: words.map((w) => `+${w}*`).join(' ') },
  };
}

/**
 * The search as a condition on one walked session `s`. MySQL/MariaDB: `REGEXP` on the name and
 * description, each word at the start of a word as InnoDB's parser cuts them (letters, digits
 * and `_`; `'` separates), its letters with the accented forms the table's collation takes
 * for them: InnoDB evaluates `MATCH` only through the index, for all matches at once. SQLite: the
 * session's index row (SessionSearchRows1765300000000) among the matches' rowids, which FTS5
 * reads from its index alone (~0.2 µs a match).
 */
export function hitOf(dialect: Dialect, filter: SessionFilter, collation: TextCollation = 'general'): Condition {
  const words = searchWords(filter.search ?? '');
  if (dialect === 'sqlite') {
    return {
      sql:
        '((SELECT r.id FROM agent_session_search_rows r WHERE r.session_id = s.id) ' +
        'IN (SELECT rowid FROM agent_session_search WHERE agent_session_search MATCH :search))',
      params: { search: ftsQuery(words) },
    };
  }
  const params: Record<string, string> = {};
  const sql = words.map((word, i) => {
    params[`searchWord${i}`] = wordPattern(word, collation);
    return `(s.name REGEXP :searchWord${i} OR COALESCE(s.description, '') REGEXP :searchWord${i})`;
  });
  return { sql: `(${sql.join(' AND ')})`, params };
}

/** Every word a prefix, all of them (FTS5's query language; the words carry no operator). */
const ftsQuery = (words: readonly string[]): string => words.map((w) => `"${w}"*`).join(' AND ');

/**
 * How the search table's text compares on MySQL/MariaDB: its column's collation, the database's
 * default when the table was made. `general`: utf8mb4_general_ci; `uca`: the Unicode ones
 * (utf8mb4_unicode_ci, …), which take "ß" for "ss" and tell "ı" from "i".
 */
export type TextCollation = 'general' | 'uca';

export const textCollationOf = (name: string | null): TextCollation => (name !== null && /_general_/.test(name) ? 'general' : 'uca');

/** A word (folded, letters and digits: searchWords) at the start of a word, for MariaDB's PCRE. */
export function wordPattern(word: string, collation: TextCollation = 'general'): string {
  const chars = [...word];
  let letters = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (collation === 'uca' && (c === 'ß' || (c === 's' && (chars[i + 1] === 's' || i === chars.length - 1)))) {
      // "ß" is "ss" there: "strasse" and "stras" find "Straße", "straße" finds "Strasse".
      const pair = c === 'ß' || chars[i + 1] === 's';
      letters += `(?:${letterPattern('s', collation)}${pair ? letterPattern('s', collation) : ''}|(?-i:ß))`;
      if (c === 's' && pair) i++;
      continue;
    }
    letters += letterPattern(c, collation);
  }
  return `(?i)(?<![\\p{L}\\p{N}_])${letters}`;
}

/** One letter of a word, with the forms the collation takes for it. */
export function letterPattern(c: string, collation: TextCollation): string {
  const folded = SAME_AS[collation][c] ?? c;
  const forms = ACCENTED[collation].get(folded);
  // Case-sensitive inside: the forms hold both cases, and PCRE's caseless ß would take ẞ, which the collations do not.
  return forms === undefined ? folded : `(?-i:[${folded}${folded.toUpperCase()}${forms}])`;
}

/** Letters a collation equates with a Latin letter without being its accented form. */
const SAME_AS: Readonly<Record<TextCollation, Readonly<Record<string, string>>>> = {
  general: { ı: 'i', ß: 's', ſ: 's', ẛ: 's' },
  uca: { ſ: 's', ẛ: 's' },
};

/**
 * The accented forms of each Latin letter (Latin-1, Extended-A and -B, Extended Additional),
 * both cases: the letters the collation compares equal to it, checked against the server in
 * test/integration/session-search-paths.test.ts.
 */
const ACCENTED: Readonly<Record<TextCollation, ReadonlyMap<string, string>>> = { general: accentedForms('general'), uca: accentedForms('uca') };

function accentedForms(collation: TextCollation): ReadonlyMap<string, string> {
  const forms = new Map<string, string>();
  for (const [from, to] of [[0xc0, 0x24f], [0x1e00, 0x1eff]] as const) {
    for (let cp = from; cp <= to; cp++) {
      const c = String.fromCodePoint(cp);
      const base = SAME_AS[collation][c] ?? c.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
      if (/^[a-z]$/.test(base)) forms.set(base, (forms.get(base) ?? '') + c);
    }
  }
  return forms;
}

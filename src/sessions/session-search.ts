import type { Caller } from '../domain/caller';
import { searchWords } from '../domain/search-words';
import type { SessionFilter } from '../domain/session';
import type { Dialect } from '../persistence/dialect';
import { matchesOf, type Condition, type SearchPath } from './session-query';

/**
 * Which way a search pages (issue 35). Driven from the full-text matches, a page costs what
 * all the matches cost (they are fetched and sorted): a rare word a few rows, a word in a
 * tenth of a million sessions seconds. Walking the order's index and testing each row costs
 * the rows read until a page is found: about a page over the share of sessions that match,
 * which is small exactly when the matches are many. So a bounded probe counts the org's
 * matches up to SEARCH_WALK_AT first: fewer, and the matches drive; that many or more, the
 * walk. The cross-over of the two costs is near √(page × org size): 4,000 is it for pages of
 * 25 in an org of ~600,000 sessions, and neither side is far off within 10x of that.
 */
export const SEARCH_WALK_AT = 4_000;

export const isSearch = (filter: SessionFilter): boolean => filter.search != null && filter.search !== '';

/** Counts the org's full-text matches, reading no more than `limit` of them. */
export function searchProbe(dialect: Dialect, caller: Caller, filter: SessionFilter, limit: number): { readonly sql: string; readonly conditions: readonly Condition[] } {
  const matches = matchesOf(searchWords(filter.search ?? ''), dialect);
  return {
    sql: `SELECT COUNT(*) AS n FROM (${matches.sql} LIMIT ${limit}) m`,
    conditions: [{ sql: '', params: { ...matches.params, callerOrg: caller.orgId } }],
  };
}

export const searchPathOf = (probed: readonly { n: number | string }[], limit: number): SearchPath =>
  Number(probed[0]?.n ?? 0) >= limit ? 'walk' : 'matches';

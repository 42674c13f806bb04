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
 * walk. Measured in MariaDB's handler reads, M matches cost about 6M (probe, then each match's
 * search row, session row and visibility) and a walk 2N + 40 × org / M (the probe to N, then
 * index entries and rows until a page of 25 has matched): they cross near √(10 × org), 1,400
 * at 200,000 sessions and 3,200 at 1,000,000; 2,000 is within 2x of either.
 */
export const SEARCH_WALK_AT = 2_000;

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

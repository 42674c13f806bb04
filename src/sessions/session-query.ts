import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import { searchWords } from '../domain/search-words';
import type { SessionFilter } from '../domain/session';
import type { Dialect } from '../persistence/dialect';

/**
 * A piece of a WHERE clause with named parameters (`:name`). Written with the tables'
 * column names, so the same text serves a TypeORM query builder and a hand-written
 * statement (the driver turns the names into its placeholders either way).
 */
export interface Condition {
  readonly sql: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * SQL form of domain/visibility.ts `canRead`, for lists: the caller's org only; admins see
 * all of it, others what they own, take part in, or what is public; deleted sessions only
 * for admins who ask. The sessions must be aliased `s` (they need not be the root).
 */
export function visibility(caller: Caller, includeDeleted: boolean): Condition[] {
  const conditions: Condition[] = [{ sql: 's.org_id = :callerOrg', params: { callerOrg: caller.orgId } }];
  // The flags are literals (booleans are 0/1 on both databases), not parameters: once SQLite
  // has statistics (ANALYZE, PRAGMA optimize) and the org column alone does not narrow the
  // sessions, a bound `is_deleted = ?` makes its planner scan and sort the whole table
  // instead of walking the order's index: many times slower, and growing with the sessions (docs/performance.md).
  if (!includeDeleted) conditions.push({ sql: 's.is_deleted = 0', params: {} });
  if (!isAdmin(caller)) {
    // A participant row carries its session's org. Naming it lets MariaDB look the caller's
    // participations up by (org_id, user_id) instead of scanning that whole index for every
    // page and count: the list's two statements cost MariaDB a third less CPU.
    conditions.push({
      sql:
        '(s.owner_user_id = :callerUser OR s.is_public = 1 OR ' +
        'EXISTS (SELECT 1 FROM agent_session_participants vp WHERE vp.session_id = s.id AND vp.org_id = :callerOrg AND vp.user_id = :callerUser))',
      params: { callerOrg: caller.orgId, callerUser: caller.userId },
    });
  }
  return conditions;
}

/** Conditions as one WHERE clause (joined with AND). */
export const whereOf = (conditions: readonly Condition[]): string => conditions.map((c) => c.sql).join(' AND ');

/** The conditions' named parameters in one object, for the driver's escapeQueryWithParameters. */
export const paramsOf = (conditions: readonly Condition[]): Record<string, unknown> =>
  Object.assign({}, ...conditions.map((c) => c.params)) as Record<string, unknown>;

export function applyVisibility<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, caller: Caller, includeDeleted: boolean): void {
  for (const c of visibility(caller, includeDeleted)) qb.andWhere(c.sql, c.params);
}

const EQUAL_FILTERS = [
  ['ownerUserId', 's.owner_user_id'],
  ['agentContextId', 's.agent_context_id'],
  ['conversationContextId', 's.conversation_context_id'],
  ['workspaceId', 's.workspace_id'],
  ['repo', 's.repo'],
  ['lastTurnStatus', 's.last_turn_status'],
] as const satisfies readonly (readonly [keyof SessionFilter, string])[];

/** Visibility plus every filter the caller gave. */
export function filterConditions(caller: Caller, filter: SessionFilter, dialect: Dialect): Condition[] {
  const conditions = visibility(caller, filter.includeDeleted === true);
  if (filter.participantId != null) {
    // The owner is recorded as a participant when the session is created (DD-003).
    conditions.push({
      sql: 'EXISTS (SELECT 1 FROM agent_session_participants fp WHERE fp.session_id = s.id AND fp.org_id = :callerOrg AND fp.user_id = :participantId)',
      params: { callerOrg: caller.orgId, participantId: filter.participantId },
    });
  }
  for (const [field, column] of EQUAL_FILTERS) {
    const value = filter[field];
    if (value != null) conditions.push({ sql: `${column} = :${field}`, params: { [field]: value } });
  }
  if (filter.updatedAfter) conditions.push({ sql: 's.last_updated_date > :updatedAfter', params: { updatedAfter: filter.updatedAfter } });
  if (filter.updatedBefore) conditions.push({ sql: 's.last_updated_date < :updatedBefore', params: { updatedBefore: filter.updatedBefore } });
  if (filter.search != null && filter.search !== '') conditions.push(searchCondition(searchWords(filter.search), dialect));
  return conditions;
}

/**
 * domain/search-words.ts's rule on the full-text index of the sessions' names and descriptions
 * (SessionSearch1765100000001): every word as a prefix, within the caller's org. The words are
 * letters and digits only, so they carry no operator of either query language.
 */
function searchCondition(words: readonly string[], dialect: Dialect): Condition {
  if (dialect === 'sqlite') {
    return {
      sql: 's.id IN (SELECT session_id FROM agent_session_search WHERE agent_session_search MATCH :search AND org_id = :callerOrg)',
      params: { search: words.map((w) => `"${w}"*`).join(' AND ') },
    };
  }
  return {
    sql: 's.id IN (SELECT ss.session_id FROM agent_session_search ss WHERE MATCH(ss.body) AGAINST(:search IN BOOLEAN MODE) AND ss.org_id = :callerOrg)',
    params: { search: words.map((w) => `+${w}*`).join(' ') },
  };
}

import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import type { SessionFilter } from '../domain/session';

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
  const member = memberTest(caller);
  return member === null ? orgRange(caller, includeDeleted) : [...orgRange(caller, includeDeleted), member];
}

/** The caller's org, without its deleted sessions unless asked: what an admin sees. */
function orgRange(caller: Caller, includeDeleted: boolean): Condition[] {
  const conditions: Condition[] = [{ sql: 's.org_id = :callerOrg', params: { callerOrg: caller.orgId } }];
  // The flags are literals (booleans are 0/1 on both databases), not parameters: once SQLite
  // has statistics (ANALYZE, PRAGMA optimize) and the org column alone does not narrow the
  // sessions, a bound `is_deleted = ?` makes its planner scan and sort the whole table
  // instead of walking the order's index: many times slower, and growing with the sessions (docs/performance.md).
  if (!includeDeleted) conditions.push({ sql: 's.is_deleted = 0', params: {} });
  return conditions;
}

/** What a member sees of the org (null for an admin): their own, public, and theirs to take part in. */
export function memberTest(caller: Caller): Condition | null {
  if (isAdmin(caller)) return null;
  // A participant row carries its session's org. Naming it lets MariaDB look the caller's
  // participations up by (org_id, user_id) instead of scanning that whole index for every
  // page and count: the list's two statements cost MariaDB a third less CPU.
  return {
    sql:
      '(s.owner_user_id = :callerUser OR s.is_public = 1 OR ' +
      'EXISTS (SELECT 1 FROM agent_session_participants vp WHERE vp.session_id = s.id AND vp.org_id = :callerOrg AND vp.user_id = :callerUser))',
    params: { callerOrg: caller.orgId, callerUser: caller.userId },
  };
}

/**
 * Which rows a list walks in its order: the sessions' (`s`), or, for a participant filter,
 * the user's participant rows (`p`), which carry their session's sort keys.
 */
export type Walk = 'sessions' | 'participant';

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

/**
 * Visibility plus every filter the caller gave but the search, which decides where the rows
 * come from (sessions/session-search.ts).
 */
export function filterConditions(caller: Caller, filter: SessionFilter, walk: Walk = 'sessions'): Condition[] {
  const member = memberTest(caller);
  return member === null ? rangeConditions(caller, filter, walk) : [...rangeConditions(caller, filter, walk), member];
}

/**
 * filterConditions without a member's own test: the sessions of the org a search walks. A
 * participant walk (session-keyset.ts participantsFrom) takes the user's rows and their
 * copies of the session's flag and dates; otherwise the participant is a test of each session.
 */
export function rangeConditions(caller: Caller, filter: SessionFilter, walk: Walk = 'sessions'): Condition[] {
  const participant = walk === 'participant' && filter.participantId != null ? filter.participantId : null;
  const conditions: Condition[] =
    participant === null
      ? orgRange(caller, filter.includeDeleted === true)
      : [
          { sql: 'p.org_id = :callerOrg AND p.user_id = :participantId AND s.org_id = :callerOrg', params: { callerOrg: caller.orgId, participantId: participant } },
          ...(filter.includeDeleted === true ? [] : [{ sql: 'p.is_deleted = 0', params: {} }]),
        ];
  if (filter.participantId != null && participant === null) {
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
  const updated = participant === null ? 's.last_updated_date' : 'p.last_updated_date';
  if (filter.updatedAfter) conditions.push({ sql: `${updated} > :updatedAfter`, params: { updatedAfter: filter.updatedAfter } });
  if (filter.updatedBefore) conditions.push({ sql: `${updated} < :updatedBefore`, params: { updatedBefore: filter.updatedBefore } });
  return conditions;
}

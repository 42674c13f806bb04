import { decodeCursor, encodeCursor, malformedCursor, type CursorPosition } from '../domain/pagination';
import type { SessionFilter, SessionOrder, SessionRecord } from '../domain/session';
import type { Dialect } from '../persistence/dialect';
import { dateOf } from './raw-values';
import type { Condition, Walk } from './session-query';

/**
 * Keyset pagination of the session lists (issue 35): which index walks each list, and cursor
 * conditions in a shape the planners turn into a range on it, so a page costs the same at
 * any depth. `a <= k AND (a < k OR id < i)` rather than `a < k OR (a = k AND id < i)`: the
 * first conjunct is a range MariaDB and SQLite can seek to; of the OR form MariaDB made a
 * `ref` on org_id and read every row before the cursor (docs/performance.md, bench:scale).
 */
interface OrderSpec {
  readonly field: 'lastUpdatedDate' | 'creationDate' | 'name';
  /** The session's column, which a participant row copies (ParticipantLists1765400000000). */
  readonly column: 'last_updated_date' | 'creation_date' | 'name';
  readonly direction: 'ASC' | 'DESC';
  /** Suffix of the indexes that walk this order: idx_sessions_list_<x> and idx_sessions_org_<x>. */
  readonly index: 'updated' | 'created' | 'name';
}

const ORDERS: Record<SessionOrder, OrderSpec> = {
  LAST_UPDATED_DESC: { field: 'lastUpdatedDate', column: 'last_updated_date', direction: 'DESC', index: 'updated' },
  LAST_UPDATED_ASC: { field: 'lastUpdatedDate', column: 'last_updated_date', direction: 'ASC', index: 'updated' },
  CREATED_DESC: { field: 'creationDate', column: 'creation_date', direction: 'DESC', index: 'created' },
  NAME_ASC: { field: 'name', column: 'name', direction: 'ASC', index: 'name' },
};

const keyOf = (spec: OrderSpec, walk: Walk): string => `${walk === 'sessions' ? 's' : 'p'}.${spec.column}`;
const idOf = (walk: Walk): string => (walk === 'sessions' ? 's.id' : 'p.session_id');

/** Later in the list (`after`) or earlier (`before`). */
export type Side = 'after' | 'before';

export const oppositeOf = (side: Side): Side => (side === 'after' ? 'before' : 'after');

/**
 * The sessions on one side of a cursor, in the list's order; `inclusive` takes the cursor's
 * own position too (the probe for rows on the far side of a page).
 */
export function keysetCondition(order: SessionOrder, cursor: string, side: Side, inclusive: boolean, walk: Walk = 'sessions'): Condition {
  const spec = ORDERS[order];
  const argument = side === 'after' ? 'after' : 'before';
  const position = decodeCursor(order, cursor, argument);
  const key = spec.field === 'name' ? position.key : toDate(position, argument);
  return positionCondition(order, key, position.id, side, inclusive, inclusive ? 'probe' : 'cursor', walk);
}

/**
 * The sessions up to a row of the order's index, that row included (a search's walk stops
 * there). `key` as the driver hands out the order's column (keyColumn).
 */
export function boundCondition(order: SessionOrder, key: string | Date, id: string, side: Side): Condition {
  return positionCondition(order, ORDERS[order].field === 'name' ? key : dateOf(key), id, side, true, 'bound');
}

/** The order's column, the key of a cursor. */
export const keyColumn = (order: SessionOrder): string => keyOf(ORDERS[order], 'sessions');

function positionCondition(order: SessionOrder, key: unknown, id: string, side: Side, inclusive: boolean, p: string, walk: Walk = 'sessions'): Condition {
  const spec = ORDERS[order];
  const op = (spec.direction === 'ASC') === (side === 'after') ? '>' : '<';
  const column = keyOf(spec, walk);
  return {
    sql: `${column} ${op}= :${p}Key AND (${column} ${op} :${p}Key OR ${idOf(walk)} ${op}${inclusive ? '=' : ''} :${p}Id)`,
    params: { [`${p}Key`]: key, [`${p}Id`]: id },
  };
}

/** The list's order, or its reverse (a backward page reads from the far end, nearest first). */
export function orderBy(order: SessionOrder, reversed = false, walk: Walk = 'sessions'): string {
  const spec = ORDERS[order];
  const d = reversed ? (spec.direction === 'ASC' ? 'DESC' : 'ASC') : spec.direction;
  return `${keyOf(spec, walk)} ${d}, ${idOf(walk)} ${d}`;
}

export function cursorOf(order: SessionOrder, session: Pick<SessionRecord, 'id' | 'name' | 'lastUpdatedDate' | 'creationDate'>): string {
  const field = ORDERS[order].field;
  const key = field === 'name' ? session.name : session[field].toISOString();
  return encodeCursor(order, { key, id: session.id });
}

/**
 * The index a list walks (migration ScaleLists1765100000000). Live sessions (is_deleted = 0)
 * walk idx_sessions_list_<order>, whose trailing owner/public/status columns answer the
 * member's visibility and the status filter without reading rows; an owner filter, or a status
 * filter in update order, walks an index that starts with it; admins asking for deleted
 * sessions too walk idx_sessions_org_<order>. A participant filter walks the user's
 * participant rows instead (participantsFrom); a search, from the full-text index's matches
 * (a search of a common word walks the index of the list without it: sessions/session-search.ts).
 */
export function indexFor(order: SessionOrder, filter: SessionFilter): string | null {
  const spec = ORDERS[order];
  if (filter.participantId != null || (filter.search != null && filter.search !== '')) return null;
  if (filter.includeDeleted === true) return `idx_sessions_org_${spec.index}`;
  if (filter.ownerUserId != null) return 'idx_sessions_owner_updated';
  if (filter.lastTurnStatus != null && spec.index === 'updated') return 'idx_sessions_status_updated';
  return `idx_sessions_list_${spec.index}`;
}

/**
 * A participant filter's rows: the user's participant rows in the order's index
 * (ParticipantLists1765400000000), each joined to its session; the join order forced, so
 * that the page reads as many sessions as it shows.
 */
export function participantsFrom(dialect: Dialect, order: SessionOrder): string {
  return participantRowsFirst(dialect, `idx_participants_list_${ORDERS[order].index}`, 'p', 's');
}

/**
 * A user's participant rows (`index` starts with org and user), each joined to its session
 * (`sessions` = the session alias), the rows first. Once SQLite has statistics of a large org,
 * its planner otherwise started a member's count from the org's sessions (142 ms at 200,000).
 */
export function participantRowsFirst(dialect: Dialect, index: string, alias: string, sessions: string): string {
  return dialect === 'sqlite'
    ? `agent_session_participants ${alias} INDEXED BY ${index} CROSS JOIN agent_sessions ${sessions} ON ${sessions}.id = ${alias}.session_id`
    : `agent_session_participants ${alias} FORCE INDEX (${index}) STRAIGHT_JOIN agent_sessions ${sessions} ON ${sessions}.id = ${alias}.session_id`;
}

/** `agent_sessions s`, told which index to walk: the planners' own choice was the org_id prefix and a sort. */
export function sessionsFrom(dialect: Dialect, index: string | null): string {
  if (index === null) return 'agent_sessions s';
  return dialect === 'sqlite' ? `agent_sessions s INDEXED BY ${index}` : `agent_sessions s FORCE INDEX (${index})`;
}

function toDate(position: CursorPosition, argument: 'after' | 'before'): Date {
  const date = typeof position.key === 'string' ? new Date(position.key) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw malformedCursor(argument);
  return date;
}

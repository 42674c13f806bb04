import { isAdmin, type Caller } from '../domain/caller';
import { assertPageSize, isBackward, type ListPageRequest } from '../domain/pagination';
import type { SessionFilter, SessionOrder } from '../domain/session';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import type { Dialect } from '../persistence/dialect';
import type { SqlValue } from '../persistence/sql';
import { booleanOf, dateOf } from './raw-values';
import { cursorOf, indexFor, keysetCondition, oppositeOf, orderBy, sessionsFrom, type Side } from './session-keyset';
import { filterConditions, paramsOf, whereOf, type Condition, type SearchPath } from './session-query';
import { isSearch, searchPathOf, searchProbe, SEARCH_WALK_AT } from './session-search';
import type { ListOptions, SessionPage, SessionSummaryRecord } from './session-store.port';
import type { SessionEntities } from './session.entities';

/**
 * The session list (DD-003 GetAgentSessionsAsync) as two hand-written statements over plain
 * rows: the page plus one row (is there a next page?), with the DD-007 context names joined
 * in when the caller shows them, and the count, only when it is wanted. The list is the
 * busiest read of the gateway: building it through the query builder and hydrating entities
 * cost more CPU than the database spent answering, and the names cost two more statements
 * per page. Only the columns of a summary are read (half of a session's): every other
 * column was parsed, turned into Dates and numbers, and dropped.
 */
const COLUMNS = `s.id, s.owner_user_id, s.owner_user_name, s.name, s.session_key, s.description, s.is_public, s.category,
  s.creation_date, s.last_updated_date, s.agent_context_id, s.conversation_context_id, s.turn_count,
  s.last_turn_status, s.last_turn_date`;

const NAME_COLUMNS = `, ac.name AS agent_context_name, cc.name AS conversation_context_name`;

const NAME_JOINS = `
  LEFT JOIN agent_contexts ac ON ac.id = s.agent_context_id AND ac.org_id = s.org_id
  LEFT JOIN conversation_contexts cc ON cc.id = s.conversation_context_id AND cc.org_id = s.org_id`;

/** A row as the drivers hand it out: mysql2 gives Dates and 0/1; SQLite gives UTC text and 0/1. */
interface SummaryRow {
  readonly id: string;
  readonly owner_user_id: string;
  readonly owner_user_name: string;
  readonly name: string;
  readonly session_key: string | null;
  readonly description: string | null;
  readonly is_public: number | boolean;
  readonly category: string | null;
  readonly creation_date: Date | string;
  readonly last_updated_date: Date | string;
  readonly agent_context_id: string;
  readonly conversation_context_id: string | null;
  readonly turn_count: number;
  readonly last_turn_status: TurnStatus | null;
  readonly last_turn_date: Date | string | null;
}

/** With ListOptions.withContextNames. */
interface NamedSummaryRow extends SummaryRow {
  readonly agent_context_name: string | null;
  readonly conversation_context_name: string | null;
}

/**
 * Counts stop here (issue 35): a count of a large org reads no more than this many index
 * entries, and says so when it stopped (`countIsLowerBound`); the dashboard shows "10,000+".
 */
export const COUNT_CAP = 10_000;

/**
 * A search's count stops sooner: it is driven from the full-text matches (a walk could read the
 * org to find 10,000), and each match costs a row of the sessions and of the search table plus
 * the caller's visibility; 1,000 keeps it to a few thousand reads at any size ("1,000+").
 */
export const SEARCH_COUNT_CAP = 1_000;

/** A statement of the list with named parameters (the driver's escapeQueryWithParameters binds them). */
export interface ListStatement {
  readonly sql: string;
  readonly conditions: readonly Condition[];
}

/**
 * The list's statements: the page (plus one row: is there more on this side?), the probe for
 * rows on the cursor's other side (the cursor's own position included), and the capped count.
 * A backward page reads from the cursor towards the start, nearest first; `list` turns it round.
 */
export function listStatements(
  dialect: Dialect,
  caller: Caller,
  filter: SessionFilter,
  order: SessionOrder,
  page: ListPageRequest,
  names: boolean,
  search: SearchPath = 'matches',
): {
  readonly size: number;
  readonly backward: boolean;
  readonly page: ListStatement;
  readonly probe: ListStatement | null;
  readonly count: ListStatement;
  /** The count comes from the maintained counters (exact, uncapped). */
  readonly counted: boolean;
  /** Where a capped count stops. */
  readonly cap: number;
} {
  const backward = isBackward(page);
  const size = backward ? assertPageSize(page.last, 'last') : assertPageSize(page.first, 'first');
  const cursor = backward ? page.before : page.after;
  const side: Side = backward ? 'before' : 'after';
  const filtered = filterConditions(caller, filter, dialect, search);
  const paged = cursor === null ? filtered : [...filtered, keysetCondition(order, cursor, side, false)];
  // A walk reads the order's index as the list without the search would.
  const from = sessionsFrom(dialect, indexFor(order, search === 'walk' ? { ...filter, search: null } : filter));
  // A search's capped count is driven from the full-text matches whichever way the page goes:
  // it stops at the cap, where a walk would read the org until it found that many.
  const counted = search === 'walk' ? filterConditions(caller, filter, dialect) : filtered;
  const countFrom = search === 'walk' ? sessionsFrom(dialect, indexFor(order, filter)) : from;
  const cap = isSearch(filter) ? SEARCH_COUNT_CAP : COUNT_CAP;
  const probe = cursor === null ? null : [...filtered, keysetCondition(order, cursor, oppositeOf(side), true)];
  return {
    size,
    backward,
    page: {
      sql:
        `SELECT ${COLUMNS}${names ? NAME_COLUMNS : ''} FROM ${from}${names ? NAME_JOINS : ''} ` +
        `WHERE ${whereOf(paged)} ORDER BY ${orderBy(order, backward)} LIMIT ${size + 1}`,
      conditions: paged,
    },
    probe: probe && { sql: `SELECT 1 AS one FROM ${from} WHERE ${whereOf(probe)} LIMIT 1`, conditions: probe },
    count: counterStatement(caller, filter) ?? {
      sql: `SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${countFrom} WHERE ${whereOf(counted)} LIMIT ${cap + 1}) c`,
      conditions: counted,
    },
    counted: counterStatement(caller, filter) !== null,
    cap,
  };
}

/** Filters the counters answer: an admin's view of the org, by owner or not, deleted sessions or not. */
const COUNTED_FILTERS: ReadonlySet<string> = new Set(['ownerUserId', 'includeDeleted']);

/**
 * A count from agent_session_counts (SessionCounts1765100000002). An admin's: a sum over a
 * few rows per owner. A member's, unfiltered: the org's public and the member's own
 * sessions from the counters, plus the member's participations in others' private sessions
 * (as many as they take part in, not the org). Null when the filter needs more than the
 * counters hold: then the capped count.
 */
function counterStatement(caller: Caller, filter: SessionFilter): ListStatement | null {
  const set = Object.entries(filter).filter(([, v]) => v != null && v !== false && v !== '');
  if (!isAdmin(caller)) {
    if (set.length > 0) return null;
    return {
      sql:
        'SELECT (SELECT COALESCE(SUM(n), 0) FROM agent_session_counts WHERE org_id = :callerOrg AND is_deleted = 0 ' +
        'AND (is_public = 1 OR owner_user_id = :callerUser)) + (SELECT COUNT(*) FROM agent_session_participants cp ' +
        'JOIN agent_sessions cs ON cs.id = cp.session_id WHERE cp.org_id = :callerOrg AND cp.user_id = :callerUser ' +
        'AND cs.org_id = :callerOrg AND cs.is_deleted = 0 AND cs.is_public = 0 AND cs.owner_user_id <> :callerUser) AS total',
      conditions: [{ sql: '', params: { callerOrg: caller.orgId, callerUser: caller.userId } }],
    };
  }
  if (!set.every(([k]) => COUNTED_FILTERS.has(k))) return null;
  const conditions: Condition[] = [{ sql: 'org_id = :callerOrg', params: { callerOrg: caller.orgId } }];
  if (filter.includeDeleted !== true) conditions.push({ sql: 'is_deleted = 0', params: {} });
  if (filter.ownerUserId != null) conditions.push({ sql: 'owner_user_id = :ownerUserId', params: { ownerUserId: filter.ownerUserId } });
  return { sql: `SELECT COALESCE(SUM(n), 0) AS total FROM agent_session_counts WHERE ${whereOf(conditions)}`, conditions };
}

export class SessionList {
  /** `searchWalkAt`: full-text matches from which a search walks the order's index (tests lower it). */
  constructor(
    private readonly db: Database<SessionEntities>,
    private readonly searchWalkAt = SEARCH_WALK_AT,
  ) {}

  async list(caller: Caller, filter: SessionFilter, order: SessionOrder, page: ListPageRequest, options: ListOptions): Promise<SessionPage> {
    const names = options.withContextNames === true;
    const search = isSearch(filter) ? searchPathOf(await this.query<{ n: number | string }>(searchProbe(this.db.dialect, caller, filter, this.searchWalkAt)), this.searchWalkAt) : 'matches';
    const statements = listStatements(this.db.dialect, caller, filter, order, page, names, search);
    const { size, backward, counted: exact, cap } = statements;
    const rowsRead = this.query<SummaryRow | NamedSummaryRow>(statements.page);
    const probe = statements.probe;
    const beyondCursor = probe === null ? Promise.resolve(false) : this.query(probe).then((rows) => rows.length > 0);
    let counted: Promise<number> | null = null;
    const count = () => (counted ??= this.query<{ total: number | string }>(statements.count).then((rows) => Number(rows[0]?.total ?? 0)));
    // Both statements at once when the count is wanted anyway: one round trip of waiting, not two.
    if (options.withTotalCount) void count().catch(() => undefined);
    const [rows, beyond] = await Promise.all([rowsRead, beyondCursor]);
    const more = rows.length > size;
    const kept = rows.slice(0, size);
    if (backward) kept.reverse();
    return {
      items: kept.map((row) => toSummary(row, names)),
      cursorOf: (s) => cursorOf(order, s),
      hasNextPage: backward ? beyond : more,
      hasPreviousPage: backward ? more : beyond,
      totalCount: async () => (exact ? await count() : Math.min(await count(), cap)),
      countIsLowerBound: async () => !exact && (await count()) > cap,
    };
  }

  /** A plain read (Database.read): on MySQL the page and the count share one round trip, on SQLite they run off the main thread. */
  private query<T>({ sql, conditions }: ListStatement): Promise<T[]> {
    const [text, params] = this.db.dataSource.driver.escapeQueryWithParameters(sql, paramsOf(conditions));
    return this.db.read<T>(text, params as SqlValue[]);
  }
}

function toSummary(row: SummaryRow | NamedSummaryRow, names: boolean): SessionSummaryRecord {
  const summary: SessionSummaryRecord = {
    id: row.id,
    name: row.name,
    key: row.session_key,
    description: row.description,
    isPublic: booleanOf(row.is_public),
    category: row.category,
    ownerUser: { id: row.owner_user_id, text: row.owner_user_name },
    creationDate: dateOf(row.creation_date),
    lastUpdatedDate: dateOf(row.last_updated_date),
    agentContextId: row.agent_context_id,
    conversationContextId: row.conversation_context_id,
    turnCount: Number(row.turn_count),
    lastTurnStatus: row.last_turn_status,
    lastTurnDate: row.last_turn_date === null ? null : dateOf(row.last_turn_date),
  };
  if (!names) return summary;
  const named = row as NamedSummaryRow;
  return Object.assign(summary, { contextNames: { agent: named.agent_context_name, conversation: named.conversation_context_name } });
}

import { isAdmin, type Caller } from '../domain/caller';
import { assertPageSize, isBackward, type ListPageRequest } from '../domain/pagination';
import type { SessionFilter, SessionOrder } from '../domain/session';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import type { Dialect } from '../persistence/dialect';
import type { SqlValue } from '../persistence/sql';
import { booleanOf, dateOf } from './raw-values';
import { boundCondition, cursorOf, indexFor, keyColumn, keysetCondition, oppositeOf, orderBy, participantRowsFirst, participantsFrom, sessionsFrom, type Side } from './session-keyset';
import { filterConditions, memberTest, paramsOf, rangeConditions, whereOf, type Condition, type Walk } from './session-query';
import { hitOf, isSearch, matchesFrom, SEARCH_COUNT_CAP, SEARCH_COUNT_ROWS, SEARCH_PROBE_ROWS, SEARCH_WALK_ROWS, textCollationOf, type TextCollation } from './session-search';
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

/** A statement of the list with named parameters (the driver's escapeQueryWithParameters binds them). */
export interface ListStatement {
  readonly sql: string;
  readonly conditions: readonly Condition[];
}

/**
 * The list's statements: the page (plus one row: is there more on this side?), the probe for
 * rows on the cursor's other side (the cursor's own position included), and the capped count.
 * A backward page reads from the cursor towards the start, nearest first; `list` turns it round.
 * A search's are driven from its full-text matches (the rare word's way: searchWalk has the
 * walk that comes first).
 */
export function listStatements(
  dialect: Dialect,
  caller: Caller,
  filter: SessionFilter,
  order: SessionOrder,
  page: ListPageRequest,
  names: boolean,
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
  const { size, backward, cursor, side } = pageOf(page);
  const matches = isSearch(filter) ? matchesFrom(dialect, filter) : null;
  const walk: Walk = matches === null && filter.participantId != null ? 'participant' : 'sessions';
  const filtered = filterConditions(caller, filter, walk);
  const from = matches !== null ? matches.sql : walk === 'participant' ? participantsFrom(dialect, order) : sessionsFrom(dialect, indexFor(order, filter));
  // The matches' own parameters, beside the conditions (their text is in `from`).
  const extra: Condition[] = matches === null ? [] : [{ sql: '', params: matches.params }];
  const paged = cursor === null ? filtered : [...filtered, keysetCondition(order, cursor, side, false, walk)];
  const cap = matches === null ? COUNT_CAP : SEARCH_COUNT_CAP;
  const probe = cursor === null ? null : [...filtered, keysetCondition(order, cursor, oppositeOf(side), true, walk)];
  const counter = counterStatement(dialect, caller, filter);
  return {
    size,
    backward,
    page: {
      sql:
        `SELECT ${COLUMNS}${names ? NAME_COLUMNS : ''} FROM ${from}${names ? NAME_JOINS : ''} ` +
        `WHERE ${whereOf(paged)} ORDER BY ${orderBy(order, backward, walk)} LIMIT ${size + 1}`,
      conditions: [...paged, ...extra],
    },
    probe: probe && { sql: `SELECT 1 AS one FROM ${from} WHERE ${whereOf(probe)} LIMIT 1`, conditions: [...probe, ...extra] },
    count: counter ?? {
      sql: `SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${from} WHERE ${whereOf(filtered)} LIMIT ${cap + 1}) c`,
      conditions: [...filtered, ...extra],
    },
    counted: counter !== null,
    cap,
  };
}

/** The row a search's walk stops at: the order's key and the id. */
export interface BoundRow {
  readonly k: string | Date;
  readonly id: string;
}

/**
 * A search's walk (sessions/session-search.ts): the order's index, as the list without the
 * search reads it, each session tested. `bound` finds where a walk of `rows` sessions from the
 * cursor (or the start) ends, on the index alone: the org's range, a member's own test left
 * out (it reads participant rows). With that row as a bound, the page and the count read the
 * index until they have what they need or reach it, and stop; no row is read twice. The
 * probe tests the `probeRows` nearest sessions on the cursor's other side: `walked` of them,
 * `hits` matching.
 */
export function searchWalk(
  dialect: Dialect,
  caller: Caller,
  filter: SessionFilter,
  order: SessionOrder,
  page: ListPageRequest,
  names: boolean,
  limits: SearchWalkLimits,
  collation: TextCollation = 'general',
): {
  /** The bound of the page's walk: no row, the range ends sooner. */
  readonly bound: ListStatement;
  /** The bound of the count's walk (from the start). */
  readonly countBound: ListStatement;
  page(bound: BoundRow | null): ListStatement;
  count(bound: BoundRow | null, cap: number): ListStatement;
  readonly probe: ListStatement | null;
} {
  const { size, backward, cursor, side } = pageOf(page);
  const range = rangeConditions(caller, filter);
  const member = memberTest(caller);
  // The session's own test before the member's, which reads a participant row.
  const tested = [hitOf(dialect, filter, collation), ...(member === null ? [] : [member])];
  const from = sessionsFrom(dialect, indexFor(order, { ...filter, search: null }));
  const paged = cursor === null ? range : [...range, keysetCondition(order, cursor, side, false)];
  const ordered = orderBy(order, backward);
  const boundOf = (conditions: readonly Condition[], by: string, rows: number): ListStatement => ({
    sql: `SELECT ${keyColumn(order)} AS k, s.id AS id FROM ${from} WHERE ${whereOf(conditions)} ORDER BY ${by} LIMIT 1 OFFSET ${Math.max(0, rows - 1)}`,
    conditions,
  });
  // The walk's far end: the bound row's side of it, towards where the walk came from.
  const upTo = (bound: BoundRow | null, towards: Side): Condition[] => (bound === null ? [] : [boundCondition(order, bound.k, bound.id, towards)]);
  const probe = cursor === null ? null : [...range, keysetCondition(order, cursor, oppositeOf(side), true)];
  const test = whereOf(tested);
  return {
    bound: boundOf(paged, ordered, limits.rows),
    countBound: boundOf(range, orderBy(order), limits.countRows),
    page: (bound) => {
      const conditions = [...paged, ...upTo(bound, backward ? 'after' : 'before'), ...tested];
      return {
        sql:
          `SELECT ${COLUMNS}${names ? NAME_COLUMNS : ''} FROM ${from}${names ? NAME_JOINS : ''} ` +
          `WHERE ${whereOf(conditions)} ORDER BY ${ordered} LIMIT ${size + 1}`,
        conditions,
      };
    },
    count: (bound, cap) => {
      const conditions = [...range, ...upTo(bound, 'before'), ...tested];
      return { sql: `SELECT COUNT(*) AS total FROM (SELECT 1 FROM ${from} WHERE ${whereOf(conditions)} LIMIT ${cap + 1}) c`, conditions };
    },
    probe: probe && {
      sql:
        `SELECT COUNT(*) AS walked, COALESCE(SUM(CASE WHEN ${test} THEN 1 ELSE 0 END), 0) AS hits FROM ` +
        `(SELECT s.id, s.name, s.description, s.owner_user_id, s.is_public FROM ${from} WHERE ${whereOf(probe)} ` +
        `ORDER BY ${orderBy(order, !backward)} LIMIT ${limits.probeRows}) s`,
      conditions: [...probe, ...tested],
    },
  };
}

function pageOf(page: ListPageRequest): { size: number; backward: boolean; cursor: string | null; side: Side } {
  const backward = isBackward(page);
  return {
    size: backward ? assertPageSize(page.last, 'last') : assertPageSize(page.first, 'first'),
    backward,
    cursor: backward ? page.before : page.after,
    side: backward ? 'before' : 'after',
  };
}

/**
 * What the maintained counters answer for an admin: the org's sessions by owner or not
 * (agent_session_counts), or one participant's (agent_session_participant_counts); deleted
 * sessions or not.
 */
const SESSION_COUNTERS = { table: 'agent_session_counts', filters: new Set(['ownerUserId', 'includeDeleted']) };
const PARTICIPANT_COUNTERS = { table: 'agent_session_participant_counts', filters: new Set(['participantId', 'includeDeleted']) };

/**
 * A count from agent_session_counts (SessionCounts1765100000002). An admin's: a sum over a
 * few rows per owner; by participant, from agent_session_participant_counts
 * (ParticipantLists1765400000000). A member's, unfiltered: the org's public and the member's own
 * sessions from the counters, plus the member's participations in others' private sessions
 * (as many as they take part in, not the org). Null when the filter needs more than the
 * counters hold: then the capped count.
 */
function counterStatement(dialect: Dialect, caller: Caller, filter: SessionFilter): ListStatement | null {
  const set = Object.entries(filter).filter(([, v]) => v != null && v !== false && v !== '');
  if (!isAdmin(caller)) {
    if (set.length > 0) return null;
    return {
      sql:
        'SELECT (SELECT COALESCE(SUM(n), 0) FROM agent_session_counts WHERE org_id = :callerOrg AND is_deleted = 0 ' +
        `AND (is_public = 1 OR owner_user_id = :callerUser)) + (SELECT COUNT(*) FROM ${participantRowsFirst(dialect, 'idx_participants_list_updated', 'cp', 'cs')} ` +
        'WHERE cp.org_id = :callerOrg AND cp.user_id = :callerUser AND cp.is_deleted = 0 ' +
        'AND cs.org_id = :callerOrg AND cs.is_deleted = 0 AND cs.is_public = 0 AND cs.owner_user_id <> :callerUser) AS total',
      conditions: [{ sql: '', params: { callerOrg: caller.orgId, callerUser: caller.userId } }],
    };
  }
  const counters = filter.participantId != null ? PARTICIPANT_COUNTERS : SESSION_COUNTERS;
  if (!set.every(([k]) => counters.filters.has(k))) return null;
  const conditions: Condition[] = [{ sql: 'org_id = :callerOrg', params: { callerOrg: caller.orgId } }];
  if (filter.includeDeleted !== true) conditions.push({ sql: 'is_deleted = 0', params: {} });
  if (filter.ownerUserId != null) conditions.push({ sql: 'owner_user_id = :ownerUserId', params: { ownerUserId: filter.ownerUserId } });
  if (filter.participantId != null) conditions.push({ sql: 'user_id = :participantId', params: { participantId: filter.participantId } });
  return { sql: `SELECT COALESCE(SUM(n), 0) AS total FROM ${counters.table} WHERE ${whereOf(conditions)}`, conditions };
}

/** Runs a statement of the list and hands back its rows. */
export type ListRunner = <T>(statement: ListStatement) => Promise<T[]>;

/** How far a search walks before it asks the full-text index (tests and the bench change it). */
export interface SearchWalkLimits {
  /** Sessions from the cursor the page tests (SEARCH_WALK_ROWS). */
  readonly rows: number;
  /** Sessions from the start the count tests (SEARCH_COUNT_ROWS). */
  readonly countRows: number;
  /** Sessions on the cursor's other side the probe tests (SEARCH_PROBE_ROWS). */
  readonly probeRows: number;
}

const SEARCH_LIMITS: SearchWalkLimits = { rows: SEARCH_WALK_ROWS, countRows: SEARCH_COUNT_ROWS, probeRows: SEARCH_PROBE_ROWS };

interface WindowRow {
  readonly walked: number | string;
  readonly hits: number | string;
}

/**
 * The list's reads, started: the page's rows (plus one), whether rows lie beyond the cursor,
 * and the count when asked for. A search walks first and asks the full-text index only when
 * the walk leaves the answer open (sessions/session-search.ts): the page when its window held
 * fewer matches than the page and did not end the range; the probe when none of the nearest
 * sessions past the cursor matched; the count when the window proved neither the cap nor the
 * total. On SQLite the probe and the count go to the matches straight away: FTS5 reads them
 * lazily, a LIMIT stops it, and its walk tests rows against all of them.
 */
export function readList(
  run: ListRunner,
  dialect: Dialect,
  caller: Caller,
  filter: SessionFilter,
  order: SessionOrder,
  page: ListPageRequest,
  names: boolean,
  limits: SearchWalkLimits = SEARCH_LIMITS,
  collation: TextCollation = 'general',
): {
  readonly size: number;
  readonly backward: boolean;
  /** The count is exact (the counters), not capped. */
  readonly exact: boolean;
  readonly cap: number;
  readonly rows: Promise<(SummaryRow | NamedSummaryRow)[]>;
  readonly beyond: Promise<boolean>;
  count(): Promise<number>;
} {
  const statements = listStatements(dialect, caller, filter, order, page, names);
  const { size, backward, counted: exact, cap } = statements;
  const total = () => run<{ total: number | string }>(statements.count).then((rows) => Number(rows[0]?.total ?? 0));
  const any = (s: ListStatement) => run(s).then((rows) => rows.length > 0);
  let counted: Promise<number> | null = null;
  if (!isSearch(filter)) {
    return {
      size,
      backward,
      exact,
      cap,
      rows: run<SummaryRow | NamedSummaryRow>(statements.page),
      beyond: statements.probe === null ? Promise.resolve(false) : any(statements.probe),
      count: () => (counted ??= total()),
    };
  }
  const walk = searchWalk(dialect, caller, filter, order, page, names, limits, collation);
  // No bound row: the range ends within the walk, which is then the whole answer.
  const boundOf = (s: ListStatement, rows: number) => (rows === 0 ? Promise.resolve(undefined) : run<BoundRow>(s).then((r) => r[0] ?? null));
  const bound = boundOf(walk.bound, limits.rows);
  const rows = (async () => {
    const end = await bound;
    if (end === undefined) return run<SummaryRow | NamedSummaryRow>(statements.page);
    const walked = await run<SummaryRow | NamedSummaryRow>(walk.page(end));
    return walked.length > size || end === null ? walked : run<SummaryRow | NamedSummaryRow>(statements.page);
  })();
  const matchesFirst = dialect === 'sqlite';
  const probe = statements.probe;
  const beyond = (async () => {
    if (probe === null || walk.probe === null) return false;
    if (matchesFirst || limits.probeRows === 0) return any(probe);
    const row = (await run<WindowRow>(walk.probe))[0];
    if (Number(row?.hits ?? 0) > 0) return true;
    return Number(row?.walked ?? 0) < limits.probeRows ? false : any(probe);
  })();
  const count = async () => {
    const end = matchesFirst ? undefined : await boundOf(walk.countBound, limits.countRows);
    if (end === undefined) return total();
    const walked = Number((await run<{ total: number | string }>(walk.count(end, cap)))[0]?.total ?? 0);
    // More than the cap, or the whole range: the walk has the answer.
    return walked > cap || end === null ? walked : total();
  };
  return { size, backward, exact, cap, rows, beyond, count: () => (counted ??= count()) };
}

export class SessionList {
  /** `limits`: how far a search walks before it asks the full-text index (tests change them). */
  constructor(
    private readonly db: Database<SessionEntities>,
    private readonly limits: SearchWalkLimits = SEARCH_LIMITS,
  ) {}

  private collation: Promise<TextCollation> | null = null;

  async list(caller: Caller, filter: SessionFilter, order: SessionOrder, page: ListPageRequest, options: ListOptions): Promise<SessionPage> {
    const names = options.withContextNames === true;
    const collation = isSearch(filter) && this.db.dialect !== 'sqlite' ? await this.textCollation() : 'general';
    const reads = readList((s) => this.query(s), this.db.dialect, caller, filter, order, page, names, this.limits, collation);
    const { size, backward, exact, cap } = reads;
    // The count at once when it is wanted anyway: one round trip of waiting, not two.
    if (options.withTotalCount) void reads.count().catch(() => undefined);
    const [rows, beyond] = await Promise.all([reads.rows, reads.beyond]);
    const more = rows.length > size;
    const kept = rows.slice(0, size);
    if (backward) kept.reverse();
    return {
      items: kept.map((row) => toSummary(row, names)),
      cursorOf: (s) => cursorOf(order, s),
      hasNextPage: backward ? beyond : more,
      hasPreviousPage: backward ? more : beyond,
      totalCount: async () => (exact ? await reads.count() : Math.min(await reads.count(), cap)),
      countIsLowerBound: async () => !exact && (await reads.count()) > cap,
    };
  }

  /** The search table's collation, read once (the walk tests words as it compares them). */
  private textCollation(): Promise<TextCollation> {
    this.collation ??= this.db
      .read<{ c: string | null }>(
        "SELECT COLLATION_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'agent_session_search' AND COLUMN_NAME = 'body'",
      )
      .then((rows) => textCollationOf(rows[0]?.c ?? null))
      .catch((e: unknown) => {
        this.collation = null;
        throw e;
      });
    return this.collation;
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

/**
 * The baseline's data for bench/list-sessions.bench.ts: a denormalised summary table (one row
 * per session, context names copied in) built from the seeded tables with hand-written SQL,
 * and the two statements a hand-written endpoint needs for one page. None of the gateway's
 * code is involved; only its table and column names are.
 */

export const SUMMARY_TABLE = 'bench_session_summaries';

const SELECT_SUMMARIES = `SELECT s.id, s.org_id, s.owner_user_id, s.owner_user_name, s.name, s.is_public, s.is_deleted,
    ac.name AS agent_context_name, cc.name AS conversation_context_name,
    s.last_turn_status, s.last_turn_date, s.turn_count, s.last_updated_date
  FROM agent_sessions s
  LEFT JOIN agent_contexts ac ON ac.id = s.agent_context_id AND ac.org_id = s.org_id
  LEFT JOIN conversation_contexts cc ON cc.id = s.conversation_context_id AND cc.org_id = s.org_id`;

/** Statements that create and fill the table with the index the page needs (newest activity first). */
export function summaryTableDdl(dialect: 'mysql' | 'sqlite'): string[] {
  if (dialect === 'mysql') {
    return [
      `CREATE TABLE ${SUMMARY_TABLE} (PRIMARY KEY (id), INDEX idx_bench_summaries_list (org_id, is_deleted, last_updated_date, id)) AS ${SELECT_SUMMARIES}`,
      `ANALYZE TABLE ${SUMMARY_TABLE}`,
    ];
  }
  return [
    `CREATE TABLE ${SUMMARY_TABLE} AS ${SELECT_SUMMARIES}`,
    `CREATE UNIQUE INDEX idx_bench_summaries_id ON ${SUMMARY_TABLE} (id)`,
    `CREATE INDEX idx_bench_summaries_list ON ${SUMMARY_TABLE} (org_id, is_deleted, last_updated_date, id)`,
    `ANALYZE`,
  ];
}

/**
 * The caller's visibility: own org, not deleted, and owner, participant or public (the owner is
 * a participant too). Naming the org in the participant lookup lets it use (org_id, user_id).
 */
const VISIBLE = `s.org_id = ? AND s.is_deleted = 0
  AND (s.owner_user_id = ? OR s.is_public = 1
       OR EXISTS (SELECT 1 FROM agent_session_participants p WHERE p.session_id = s.id AND p.org_id = ? AND p.user_id = ?))`;

/** The parameters of VISIBLE, in order. */
export const visibleParams = (org: string, user: string): [string, string, string, string] => [org, user, org, user];

/** One page plus one row to tell whether another page follows. Parameters: visibleParams. */
export const pageSql = (limit: number): string => `SELECT s.id, s.name, s.agent_context_name, s.conversation_context_name, s.last_turn_status,
    s.last_turn_date, s.turn_count, s.owner_user_id, s.owner_user_name
  FROM ${SUMMARY_TABLE} s WHERE ${VISIBLE}
  ORDER BY s.last_updated_date DESC, s.id DESC LIMIT ${Math.trunc(limit)}`;

/** Parameters: visibleParams. */
export const COUNT_SQL = `SELECT COUNT(*) AS total FROM ${SUMMARY_TABLE} s WHERE ${VISIBLE}`;

export interface SummaryRow {
  readonly id: string;
  readonly name: string;
  readonly agent_context_name: string | null;
  readonly conversation_context_name: string | null;
  readonly last_turn_status: string | null;
  /** mysql2 gives a Date; SQLite the stored UTC text, `YYYY-MM-DD HH:MM:SS.SSS`. */
  readonly last_turn_date: Date | string | null;
  readonly turn_count: number;
  readonly owner_user_id: string;
  readonly owner_user_name: string;
}

const iso = (value: Date | string | null): string | null =>
  value === null ? null : value instanceof Date ? value.toISOString() : new Date(`${value.replace(' ', 'T')}Z`).toISOString();

/** The response body, shaped like the GraphQL answer so both are compared (and parsed by the client) alike. */
export function pageBody(rows: readonly SummaryRow[], pageSize: number, total: number): string {
  return JSON.stringify({
    data: {
      agentSessions: {
        totalCount: total,
        pageInfo: { hasNextPage: rows.length > pageSize },
        edges: rows.slice(0, pageSize).map((r) => ({
          node: {
            id: r.id,
            name: r.name,
            agentContextName: r.agent_context_name,
            conversationContextName: r.conversation_context_name,
            lastTurnStatus: r.last_turn_status,
            lastTurnDate: iso(r.last_turn_date),
            turnCount: r.turn_count,
            ownerUser: { id: r.owner_user_id, text: r.owner_user_name },
          },
        })),
      },
    },
  });
}

import { userHeader, type Caller, type OrgScope } from '../domain/caller';
import { assertPageSize, decodeCursor, encodeCursor, malformedCursor, type PageRequest } from '../domain/pagination';
import type { SessionRecord } from '../domain/session';
import { checkForkPoint, type ForkOrigin, type SessionForkRecord } from '../domain/session-fork';
import type { Database } from '../persistence/database';
import type { SqlValue } from '../persistence/sql';
import { UUID_SQL, type WebhookOutbox } from '../webhooks/webhook-outbox';
import type { ForkEntities } from './fork.entities';
import { booleanOf, dateOf, nullableNumberOf } from './raw-values';
import { INSERT_SESSION, SESSION_COLUMNS, sessionRowOf, sessionValues, toSessionRecord, type RawSessionRow } from './records';
import type { SessionLocks } from './session-locks';
import { paramsOf, visibility, whereOf, type Condition } from './session-query';
import type { NewFork, SessionForkReader, SessionForkStore } from './session-forks.port';
import type { SessionPage } from './session-store.port';
import type { SessionEntities, SessionRow } from './session.entities';

/** Every column of a turn a copy keeps: all but its identity, its session, its lease and its revision. */
const COPIED_TURN_COLUMNS = `org_id, sequence_number, created_by_user_id, created_by_user_name, creation_date, status, status_time_stamp,
  mode, conversation_id, openai_model, openai_response_id, previous_openai_response_id, openai_response_received_date,
  openai_chain_expires_date, instruction_summary, full_instruction_url, agent_answer_summary, full_agent_answer_url,
  openai_request_payload_url, openai_response_payload_url, chunk_refs, active_file_refs, pending_tool_calls, tool_call_records,
  output_files, answered_by_model, warnings, errors, input_tokens, output_tokens, cached_input_tokens, usage_estimated,
  estimated_cost_usd, openai_chain_restart_reason, request_metadata`;

const COPY_MAP = `INSERT INTO agent_session_turn_copies (turn_id, org_id, session_id, source_session_id, source_turn_id)
  SELECT n.id, n.org_id, n.session_id, o.session_id, o.id FROM agent_session_turns n
  JOIN agent_session_turns o ON o.session_id = ? AND o.org_id = n.org_id AND o.sequence_number = n.sequence_number
  WHERE n.session_id = ? AND n.org_id = ?`;

const FORK_ROW = `INSERT INTO agent_session_forks (session_id, org_id, source_session_id, source_turn_id, created_date, inherited_input_tokens,
  inherited_output_tokens, inherited_cached_input_tokens, inherited_cost_usd, inherited_usage_estimated)
  SELECT ?, ?, ?, ?, ?, COALESCE(SUM(t.input_tokens), 0), COALESCE(SUM(t.output_tokens), 0), COALESCE(SUM(t.cached_input_tokens), 0),
    SUM(t.estimated_cost_usd), COALESCE(MAX(t.usage_estimated), 0)
  FROM agent_session_turns t WHERE t.session_id = ? AND t.org_id = ? AND t.sequence_number <= ?`;

const FORKS_CURSOR = 'FORKS';

interface RawFork {
  readonly session_id: string;
  readonly source_session_id: string;
  readonly source_turn_id: string;
  readonly inherited_input_tokens: number | string;
  readonly inherited_output_tokens: number | string;
  readonly inherited_cached_input_tokens: number | string;
  readonly inherited_cost_usd: number | string | null;
  readonly inherited_usage_estimated: number | boolean | string;
}

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * Forks (issue 39), part of the session store: the one writer of a fork's session and turns
 * (it only ever inserts: the source is read, never changed) and the reads of lineage. A fork
 * holds copies of the source's turns 1..n (same ids of provider responses, summaries, blob
 * URLs, usage), numbered as in the source, so its next execute continues the provider chain of
 * turn n, or preloads a new one from those copies. The copies' usage stays the source's: the
 * fork's own totals start at zero and its inherited usage is recorded apart, and the usage
 * report leaves copies out, so nothing is counted twice.
 */
export class SessionForks implements SessionForkStore, SessionForkReader {
  private readonly copyTurns: string;

  constructor(
    private readonly db: Database<SessionEntities & ForkEntities>,
    private readonly deps: {
      readonly locks: SessionLocks;
      readonly outbox: Pick<WebhookOutbox, 'statements'>;
      readonly now: () => Date;
    },
  ) {
    const source = COPIED_TURN_COLUMNS.split(',').map((c) => `t.${c.trim()}`).join(', ');
    this.copyTurns = `INSERT INTO agent_session_turns (id, session_id, ${COPIED_TURN_COLUMNS})
  SELECT ${UUID_SQL[db.dialect]}, ?, ${source} FROM agent_session_turns t WHERE t.session_id = ? AND t.org_id = ? AND t.sequence_number <= ?`;
  }

  fork(caller: Caller, fork: NewFork): Promise<SessionRecord> {
    const { locks, now: clock } = this.deps;
    return this.db.sqlTransaction(async (tx) => {
      const source = await locks.visibleSession(tx, caller, fork.sessionId);
      const turn = await locks.turn(tx, caller, source.id, fork.turnId);
      checkForkPoint(source, turn);
      const now = clock();
      const row: SessionRow = {
        ...source,
        id: fork.id,
        name: fork.name,
        ownerUserId: caller.userId,
        ownerUserName: caller.userName,
        key: null,
        isPublic: false,
        isDraft: false,
        isDeleted: false,
        creationDate: now,
        lastUpdatedDate: now,
        turnCount: turn.sequenceNumber,
        lastTurnStatus: turn.status,
        lastTurnDate: turn.statusTimeStamp,
        inputTokens: 0,
        outputTokens: 0,
        cachedInputTokens: 0,
        estimatedCostUsd: null,
        usageEstimated: false,
      };
      const session = toSessionRecord(row);
      const at: SqlValue[] = [source.id, source.orgId, turn.sequenceNumber];
      await tx.commitWith([
        { sql: INSERT_SESSION, params: sessionValues(row) },
        locks.addParticipant(row, userHeader(caller), now),
        { sql: this.copyTurns, params: [row.id, ...at] },
        { sql: COPY_MAP, params: [source.id, row.id, source.orgId] },
        { sql: FORK_ROW, params: [row.id, source.orgId, source.id, turn.id, now, ...at] },
        ...this.deps.outbox.statements({ kind: 'session-created', session, forkedFrom: { sessionId: source.id, turnId: turn.id } }),
      ]);
      return session;
    });
  }

  async originsOf(scope: OrgScope, sessionIds: readonly string[]): Promise<Map<string, SessionForkRecord>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await this.db.read<RawFork>(
      `SELECT session_id, source_session_id, source_turn_id, inherited_input_tokens, inherited_output_tokens, inherited_cached_input_tokens,
  inherited_cost_usd, inherited_usage_estimated FROM agent_session_forks WHERE org_id = ? AND session_id IN (${placeholders(sessionIds.length)})`,
      [scope.orgId, ...sessionIds],
    );
    return new Map(
      rows.map((r) => {
        const input = Number(r.inherited_input_tokens);
        const output = Number(r.inherited_output_tokens);
        const usage = {
          inputTokens: input,
          outputTokens: output,
          totalTokens: input + output,
          cachedInputTokens: Number(r.inherited_cached_input_tokens),
          estimatedCostUsd: nullableNumberOf(r.inherited_cost_usd),
          isEstimated: booleanOf(r.inherited_usage_estimated),
        };
        return [r.session_id, { sessionId: r.source_session_id, turnId: r.source_turn_id, inheritedUsage: usage }];
      }),
    );
  }

  async turnOriginsOf(scope: OrgScope, turnIds: readonly string[]): Promise<Map<string, ForkOrigin>> {
    if (turnIds.length === 0) return new Map();
    const rows = await this.db.read<{ turn_id: string; source_session_id: string; source_turn_id: string }>(
      `SELECT turn_id, source_session_id, source_turn_id FROM agent_session_turn_copies WHERE org_id = ? AND turn_id IN (${placeholders(turnIds.length)})`,
      [scope.orgId, ...turnIds],
    );
    return new Map(rows.map((r) => [r.turn_id, { sessionId: r.source_session_id, turnId: r.source_turn_id }]));
  }

  async forksOf(caller: Caller, sessionId: string, page: PageRequest): Promise<SessionPage> {
    const first = assertPageSize(page.first);
    const conditions: Condition[] = [
      { sql: 'f.org_id = :callerOrg AND f.source_session_id = :forkSource', params: { callerOrg: caller.orgId, forkSource: sessionId } },
      ...visibility(caller, false),
    ];
    const paged = page.after ? [...conditions, afterFork(page.after)] : conditions;
    const from = 'FROM agent_session_forks f JOIN agent_sessions s ON s.id = f.session_id AND s.org_id = f.org_id';
    const rows = await this.query<RawSessionRow & { f_created: Date | string }>(
      `SELECT ${SESSION_COLUMNS}, f.created_date AS f_created ${from} WHERE ${whereOf(paged)} ORDER BY f.created_date DESC, f.session_id DESC LIMIT ${first + 1}`,
      paged,
    );
    const created = new Map(rows.map((r) => [r.s_id, dateOf(r.f_created)]));
    return {
      items: rows.slice(0, first).map((r) => toSessionRecord(sessionRowOf(r))),
      hasNextPage: rows.length > first,
      cursorOf: (s) => encodeCursor(FORKS_CURSOR, { key: (created.get(s.id) ?? s.creationDate).getTime(), id: s.id }),
      totalCount: async () => Number((await this.query<{ n: number | string }>(`SELECT COUNT(*) AS n ${from} WHERE ${whereOf(conditions)}`, conditions))[0]?.n ?? 0),
    };
  }

  private query<T>(sql: string, conditions: readonly Condition[]): Promise<T[]> {
    const [text, params] = this.db.dataSource.driver.escapeQueryWithParameters(sql, paramsOf(conditions));
    return this.db.read<T>(text, params as SqlValue[]);
  }
}

function afterFork(cursor: string): Condition {
  const { key, id } = decodeCursor(FORKS_CURSOR, cursor);
  if (typeof key !== 'number') throw malformedCursor();
  const at = new Date(key);
  return { sql: '(f.created_date < :forkAfter OR (f.created_date = :forkAfter AND f.session_id < :forkAfterId))', params: { forkAfter: at, forkAfterId: id } };
}

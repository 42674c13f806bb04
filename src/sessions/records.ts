import type { SessionRollUp, SessionRollUpDelta } from '../domain/session-usage';
import type { SessionRecord } from '../domain/session';
import { NO_REQUEST_METADATA } from '../domain/request-metadata';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { SqlValue, Statement } from '../persistence/sql';
import { booleanOf, dateOf, nullableDateOf, nullableNumberOf } from './raw-values';
import type { SessionRow, TurnRow } from './session.entities';

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    description: row.description,
    isPublic: Boolean(row.isPublic),
    isDraft: Boolean(row.isDraft),
    isDeleted: Boolean(row.isDeleted),
    category: row.category,
    ownerOrganization: { id: row.orgId, text: row.orgName },
    ownerUser: { id: row.ownerUserId, text: row.ownerUserName },
    creationDate: row.creationDate,
    lastUpdatedDate: row.lastUpdatedDate,
    agentContextId: row.agentContextId,
    conversationContextId: row.conversationContextId,
    workspaceId: row.workspaceId,
    repo: row.repo,
    defaultLanguage: row.defaultLanguage,
    turnCount: row.turnCount,
    lastTurnStatus: row.lastTurnStatus,
    lastTurnDate: row.lastTurnDate,
    usage: {
      inputTokens: row.inputTokens,
      outputTokens: row.outputTokens,
      totalTokens: row.inputTokens + row.outputTokens,
      cachedInputTokens: row.cachedInputTokens ?? 0,
      estimatedCostUsd: row.estimatedCostUsd,
      isEstimated: Boolean(row.usageEstimated),
    },
  };
}

export function toTurnRecord(row: TurnRow): TurnRecord {
  const hasUsage = row.inputTokens !== null && row.outputTokens !== null;
  return {
    id: row.id,
    sessionId: row.sessionId,
    orgId: row.orgId,
    sequenceNumber: row.sequenceNumber,
    createdByUser: { id: row.createdByUserId, text: row.createdByUserName },
    creationDate: row.creationDate,
    status: row.status,
    statusTimeStamp: row.statusTimeStamp,
    mode: row.mode,
    conversationId: row.conversationId,
    openAIModel: row.openAIModel,
    openAIResponseId: row.openAIResponseId,
    previousOpenAIResponseId: row.previousOpenAIResponseId,
    openAIResponseReceivedDate: row.openAIResponseReceivedDate,
    openAIChainExpiresDate: row.openAIChainExpiresDate,
    instructionSummary: row.instructionSummary,
    fullInstructionUrl: row.fullInstructionUrl,
    agentAnswerSummary: row.agentAnswerSummary,
    fullAgentAnswerUrl: row.fullAgentAnswerUrl,
    openAIRequestPayloadUrl: row.openAIRequestPayloadUrl,
    openAIResponsePayloadUrl: row.openAIResponsePayloadUrl,
    chunkRefs: row.chunkRefs,
    activeFileRefs: row.activeFileRefs,
    pendingToolCalls: row.pendingToolCalls,
    toolCalls: row.toolCalls,
    files: row.files.map((f) => (f.contentExpires ? { ...f, contentExpires: new Date(f.contentExpires) } : f)),
    answeredByModel: row.answeredByModel,
    warnings: row.warnings,
    errors: row.errors,
    usage: hasUsage
      ? {
          inputTokens: row.inputTokens ?? 0,
          outputTokens: row.outputTokens ?? 0,
          totalTokens: (row.inputTokens ?? 0) + (row.outputTokens ?? 0),
          cachedInputTokens: row.cachedInputTokens ?? 0,
          estimatedCostUsd: row.estimatedCostUsd,
          isEstimated: Boolean(row.usageEstimated),
        }
      : null,
    openAIChainRestartReason: row.openAIChainRestartReason ?? null,
    requestMetadata: row.requestMetadata ?? NO_REQUEST_METADATA,
  };
}

export function toSessionRow(session: SessionRecord): SessionRow {
  return {
    id: session.id,
    orgId: session.ownerOrganization.id,
    orgName: session.ownerOrganization.text,
    ownerUserId: session.ownerUser.id,
    ownerUserName: session.ownerUser.text,
    name: session.name,
    key: session.key,
    description: session.description,
    isPublic: session.isPublic,
    isDraft: session.isDraft,
    isDeleted: session.isDeleted,
    category: session.category,
    creationDate: session.creationDate,
    lastUpdatedDate: session.lastUpdatedDate,
    agentContextId: session.agentContextId,
    conversationContextId: session.conversationContextId,
    workspaceId: session.workspaceId,
    repo: session.repo,
    defaultLanguage: session.defaultLanguage,
    turnCount: session.turnCount,
    lastTurnStatus: session.lastTurnStatus,
    lastTurnDate: session.lastTurnDate,
    inputTokens: session.usage.inputTokens,
    outputTokens: session.usage.outputTokens,
    cachedInputTokens: session.usage.cachedInputTokens ?? 0,
    estimatedCostUsd: session.usage.estimatedCostUsd,
    usageEstimated: session.usage.isEstimated,
  };
}

/** Who runs a turn and until when (spec: nothing lost on faults); null when no instance holds it. */
export interface TurnLease {
  readonly owner: string | null;
  readonly expiresAt: Date | null;
}

export const NO_LEASE: TurnLease = { owner: null, expiresAt: null };

/**
 * The write path's statements (turn-lifecycle.ts, session-locks.ts) as plain SQL: the
 * columns of session.entities.ts, written out once. Session columns are aliased `s_*` so a
 * statement can read a session and one of its turns (turn-rows.ts TURN_COLUMNS) together.
 */
export const SESSION_COLUMNS = `s.id AS s_id, s.org_id AS s_org_id, s.org_name AS s_org_name, s.owner_user_id AS s_owner_user_id,
  s.owner_user_name AS s_owner_user_name, s.name AS s_name, s.session_key AS s_session_key, s.description AS s_description,
  s.is_public AS s_is_public, s.is_draft AS s_is_draft, s.is_deleted AS s_is_deleted, s.category AS s_category,
  s.creation_date AS s_creation_date, s.last_updated_date AS s_last_updated_date, s.agent_context_id AS s_agent_context_id,
  s.conversation_context_id AS s_conversation_context_id, s.workspace_id AS s_workspace_id, s.repo AS s_repo,
  s.default_language AS s_default_language, s.turn_count AS s_turn_count, s.last_turn_status AS s_last_turn_status,
  s.last_turn_date AS s_last_turn_date, s.input_tokens AS s_input_tokens, s.output_tokens AS s_output_tokens,
  s.cached_input_tokens AS s_cached_input_tokens, s.estimated_cost_usd AS s_estimated_cost_usd, s.usage_estimated AS s_usage_estimated`;

type DateValue = Date | string;
type NumberValue = number | string;
type BooleanValue = number | boolean | string;

/** A session row as the drivers hand it out (SESSION_COLUMNS; see raw-values.ts). */
export interface RawSessionRow {
  readonly s_id: string;
  readonly s_org_id: string;
  readonly s_org_name: string;
  readonly s_owner_user_id: string;
  readonly s_owner_user_name: string;
  readonly s_name: string;
  readonly s_session_key: string | null;
  readonly s_description: string | null;
  readonly s_is_public: BooleanValue;
  readonly s_is_draft: BooleanValue;
  readonly s_is_deleted: BooleanValue;
  readonly s_category: string | null;
  readonly s_creation_date: DateValue;
  readonly s_last_updated_date: DateValue;
  readonly s_agent_context_id: string;
  readonly s_conversation_context_id: string | null;
  readonly s_workspace_id: string | null;
  readonly s_repo: string | null;
  readonly s_default_language: string | null;
  readonly s_turn_count: NumberValue;
  readonly s_last_turn_status: TurnStatus | null;
  readonly s_last_turn_date: DateValue | null;
  readonly s_input_tokens: NumberValue;
  readonly s_output_tokens: NumberValue;
  readonly s_cached_input_tokens: NumberValue | null;
  readonly s_estimated_cost_usd: NumberValue | null;
  readonly s_usage_estimated: BooleanValue;
}

export function sessionRowOf(raw: RawSessionRow): SessionRow {
  return {
    id: raw.s_id,
    orgId: raw.s_org_id,
    orgName: raw.s_org_name,
    ownerUserId: raw.s_owner_user_id,
    ownerUserName: raw.s_owner_user_name,
    name: raw.s_name,
    key: raw.s_session_key,
    description: raw.s_description,
    isPublic: booleanOf(raw.s_is_public),
    isDraft: booleanOf(raw.s_is_draft),
    isDeleted: booleanOf(raw.s_is_deleted),
    category: raw.s_category,
    creationDate: dateOf(raw.s_creation_date),
    lastUpdatedDate: dateOf(raw.s_last_updated_date),
    agentContextId: raw.s_agent_context_id,
    conversationContextId: raw.s_conversation_context_id,
    workspaceId: raw.s_workspace_id,
    repo: raw.s_repo,
    defaultLanguage: raw.s_default_language,
    turnCount: Number(raw.s_turn_count),
    lastTurnStatus: raw.s_last_turn_status,
    lastTurnDate: nullableDateOf(raw.s_last_turn_date),
    inputTokens: Number(raw.s_input_tokens),
    outputTokens: Number(raw.s_output_tokens),
    cachedInputTokens: Number(raw.s_cached_input_tokens ?? 0),
    estimatedCostUsd: nullableNumberOf(raw.s_estimated_cost_usd),
    usageEstimated: booleanOf(raw.s_usage_estimated),
  };
}

export const INSERT_SESSION = `INSERT INTO agent_sessions (id, org_id, org_name, owner_user_id, owner_user_name, name, session_key,
  description, is_public, is_draft, is_deleted, category, creation_date, last_updated_date, agent_context_id,
  conversation_context_id, workspace_id, repo, default_language, turn_count, last_turn_status, last_turn_date, input_tokens,
  output_tokens, cached_input_tokens, estimated_cost_usd, usage_estimated)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** INSERT_SESSION's values. */
export function sessionValues(row: SessionRow): SqlValue[] {
  return [
    row.id,
    row.orgId,
    row.orgName,
    row.ownerUserId,
    row.ownerUserName,
    row.name,
    row.key,
    row.description,
    row.isPublic,
    row.isDraft,
    row.isDeleted,
    row.category,
    row.creationDate,
    row.lastUpdatedDate,
    row.agentContextId,
    row.conversationContextId,
    row.workspaceId,
    row.repo,
    row.defaultLanguage,
    row.turnCount,
    row.lastTurnStatus,
    row.lastTurnDate,
    row.inputTokens,
    row.outputTokens,
    row.cachedInputTokens,
    row.estimatedCostUsd,
    row.usageEstimated,
  ];
}

/** Set when a turn is added and never written again: its identity, place and author. */
const TURN_ORIGIN_COLUMNS = ['id', 'session_id', 'org_id', 'sequence_number', 'created_by_user_id', 'created_by_user_name', 'creation_date'] as const;

/** The columns a turn's changes write, in turnValues' order. */
const TURN_STATE_COLUMNS = [
  'status',
  'status_time_stamp',
  'mode',
  'conversation_id',
  'openai_model',
  'openai_response_id',
  'previous_openai_response_id',
  'openai_response_received_date',
  'openai_chain_expires_date',
  'instruction_summary',
  'full_instruction_url',
  'agent_answer_summary',
  'full_agent_answer_url',
  'openai_request_payload_url',
  'openai_response_payload_url',
  'chunk_refs',
  'active_file_refs',
  'pending_tool_calls',
  'tool_call_records',
  'output_files',
  'answered_by_model',
  'warnings',
  'errors',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'usage_estimated',
  'estimated_cost_usd',
  'lease_owner',
  'lease_expires_at',
  'openai_chain_restart_reason',
  'request_metadata',
] as const;

const TURN_COLUMN_LIST = [...TURN_ORIGIN_COLUMNS, ...TURN_STATE_COLUMNS];

/** Parameters: turnOrigin, then turnValues. */
export const INSERT_TURN = `INSERT INTO agent_session_turns (${TURN_COLUMN_LIST.join(', ')})
  VALUES (${TURN_COLUMN_LIST.map(() => '?').join(', ')})`;

/**
 * A turn's state; its origin (TURN_ORIGIN_COLUMNS) is never rewritten, which also spares
 * SQLite rewriting the (session, sequence) index entry. Parameters: turnValues, then the
 * turn's id and org.
 */
export const UPDATE_TURN = `UPDATE agent_session_turns SET ${TURN_STATE_COLUMNS.map((c) => `${c} = ?`).join(', ')}, revision = revision + 1
  WHERE id = ? AND org_id = ?`;

/** UPDATE_TURN for a turn that must still be PENDING (a turn leaves PENDING once). */
export const SETTLE_TURN = `${UPDATE_TURN} AND status = 'PENDING'`;

/** SETTLE_TURN for a turn still at the revision its writer last left it at: one more parameter, that revision. */
export const SETTLE_TURN_AS_WRITTEN = `${SETTLE_TURN} AND revision = ?`;

/** INSERT_TURN's first values (TURN_ORIGIN_COLUMNS). */
export function turnOrigin(turn: TurnRecord): SqlValue[] {
  return [turn.id, turn.sessionId, turn.orgId, turn.sequenceNumber, turn.createdByUser.id, turn.createdByUser.text, turn.creationDate];
}

/** The turn's state (TURN_STATE_COLUMNS; the JSON columns as jsonColumn writes them). */
export function turnValues(turn: TurnRecord, lease: TurnLease): SqlValue[] {
  return [
    turn.status,
    turn.statusTimeStamp,
    turn.mode,
    turn.conversationId,
    turn.openAIModel,
    turn.openAIResponseId,
    turn.previousOpenAIResponseId,
    turn.openAIResponseReceivedDate,
    turn.openAIChainExpiresDate,
    turn.instructionSummary,
    turn.fullInstructionUrl,
    turn.agentAnswerSummary,
    turn.fullAgentAnswerUrl,
    turn.openAIRequestPayloadUrl,
    turn.openAIResponsePayloadUrl,
    JSON.stringify(turn.chunkRefs),
    JSON.stringify(turn.activeFileRefs),
    JSON.stringify(turn.pendingToolCalls),
    JSON.stringify(turn.toolCalls),
    JSON.stringify(turn.files),
    turn.answeredByModel,
    JSON.stringify(turn.warnings),
    JSON.stringify(turn.errors),
    turn.usage?.inputTokens ?? null,
    turn.usage?.outputTokens ?? null,
    turn.usage ? (turn.usage.cachedInputTokens ?? 0) : null,
    turn.usage?.isEstimated ?? false,
    turn.usage?.estimatedCostUsd ?? null,
    lease.owner,
    lease.expiresAt,
    turn.openAIChainRestartReason,
    JSON.stringify(turn.requestMetadata),
  ];
}

const ROLL_UP_SET = `last_updated_date = ?, input_tokens = ?, output_tokens = ?, cached_input_tokens = ?, estimated_cost_usd = ?, usage_estimated = ?`;

/** A session's counters and usage after a settled turn or late usage (domain session-usage.ts), in one statement. */
export function rollUpStatement(rollUp: SessionRollUp, session: Pick<SessionRow, 'id' | 'orgId'>): Statement {
  const usage = rollUp.usage;
  const params: SqlValue[] = [
    rollUp.lastUpdatedDate,
    usage.inputTokens,
    usage.outputTokens,
    usage.cachedInputTokens ?? 0,
    usage.estimatedCostUsd,
    usage.isEstimated,
  ];
  if (!rollUp.lastTurn) return { sql: ROLL_UP_ONLY, params: [...params, session.id, session.orgId] };
  return { sql: ROLL_UP_WITH_LAST_TURN, params: [...params, rollUp.lastTurn.status, rollUp.lastTurn.date, session.id, session.orgId] };
}

/**
 * A settled turn's roll-up written relative to the session's row as it is at write time
 * (domain settledTurnDelta), so nothing need be read first: the totals move by the turn's
 * usage, and the last-turn facts change only while the turn is the session's newest.
 */
export function rollUpDeltaStatement(delta: SessionRollUpDelta, session: Pick<SessionRow, 'id' | 'orgId'>): Statement {
  const { added, lastTurn } = delta;
  const set = ['last_updated_date = ?', 'input_tokens = input_tokens + ?', 'output_tokens = output_tokens + ?', 'cached_input_tokens = cached_input_tokens + ?'];
  const params: SqlValue[] = [delta.lastUpdatedDate, added.inputTokens, added.outputTokens, added.cachedInputTokens];
  if (added.estimatedCostUsd !== null) {
    set.push('estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + ?');
    params.push(added.estimatedCostUsd);
  }
  if (delta.estimated) {
    set.push('usage_estimated = ?');
    params.push(true);
  }
  set.push('last_turn_status = CASE WHEN turn_count = ? THEN ? ELSE last_turn_status END');
  set.push('last_turn_date = CASE WHEN turn_count = ? THEN ? ELSE last_turn_date END');
  params.push(lastTurn.sequenceNumber, lastTurn.status, lastTurn.sequenceNumber, lastTurn.date);
  return { sql: `UPDATE agent_sessions SET ${set.join(', ')} WHERE id = ? AND org_id = ?`, params: [...params, session.id, session.orgId] };
}

const ROLL_UP_ONLY = `UPDATE agent_sessions SET ${ROLL_UP_SET} WHERE id = ? AND org_id = ?`;
const ROLL_UP_WITH_LAST_TURN = `UPDATE agent_sessions SET ${ROLL_UP_SET}, last_turn_status = ?, last_turn_date = ? WHERE id = ? AND org_id = ?`;

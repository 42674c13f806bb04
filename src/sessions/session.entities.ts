import { EntitySchema } from 'typeorm';
import type { ChainRestartReason } from '../domain/chain-restart';
import type { FileRef } from '../domain/file-ref';
import type { TurnRequestMetadata } from '../domain/request-metadata';
import { NO_REQUEST_METADATA } from '../domain/request-metadata';
import type { ToolCallRecord } from '../domain/tool-call-record';
import type { ActiveFileRef, ChunkRef, ToolCall } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import { bigintNumber, jsonColumn } from '../persistence/columns';
import { columnTypes, type Dialect } from '../persistence/dialect';
import { UNCOPIED } from '../persistence/migrations/1765400000000-participant-lists';

/**
 * Table rows as the ORM sees them. They never leave sessions/: the store maps them to
 * domain records, and the GraphQL layer has its own types, so internal columns (leases,
 * org ids) are never exposed by accident.
 */
export interface SessionRow {
  id: string;
  orgId: string;
  orgName: string;
  ownerUserId: string;
  ownerUserName: string;
  name: string;
  key: string | null;
  description: string | null;
  isPublic: boolean;
  isDraft: boolean;
  isDeleted: boolean;
  category: string | null;
  creationDate: Date;
  lastUpdatedDate: Date;
  agentContextId: string;
  conversationContextId: string | null;
  workspaceId: string | null;
  repo: string | null;
  defaultLanguage: string | null;
  turnCount: number;
  lastTurnStatus: TurnStatus | null;
  lastTurnDate: Date | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  estimatedCostUsd: number | null;
  usageEstimated: boolean;
}

export interface TurnRow {
  id: string;
  sessionId: string;
  orgId: string;
  sequenceNumber: number;
  createdByUserId: string;
  createdByUserName: string;
  creationDate: Date;
  status: TurnStatus;
  statusTimeStamp: Date;
  mode: string;
  conversationId: string | null;
  openAIModel: string | null;
  openAIResponseId: string | null;
  previousOpenAIResponseId: string | null;
  openAIResponseReceivedDate: Date | null;
  openAIChainExpiresDate: Date | null;
  instructionSummary: string;
  fullInstructionUrl: string | null;
  agentAnswerSummary: string | null;
  fullAgentAnswerUrl: string | null;
  openAIRequestPayloadUrl: string | null;
  openAIResponsePayloadUrl: string | null;
  chunkRefs: ChunkRef[];
  activeFileRefs: ActiveFileRef[];
  pendingToolCalls: ToolCall[];
  toolCalls: ToolCallRecord[];
  files: FileRef[];
  answeredByModel: string | null;
  warnings: string[];
  errors: string[];
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  usageEstimated: boolean;
  estimatedCostUsd: number | null;
  /** Instance that runs the turn and until when it promises to (spec: nothing lost on faults). */
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  openAIChainRestartReason: ChainRestartReason | null;
  requestMetadata: TurnRequestMetadata;
  /** Moved by every write of the turn's state (not its lease): what a write guarded on "as last written" compares. */
  revision: number;
}

export interface ParticipantRow {
  sessionId: string;
  userId: string;
  orgId: string;
  userName: string;
  joinedDate: Date;
  /** Copies of the session's, kept by triggers (ParticipantLists1765400000000): what the participant filter walks. */
  sessionIsDeleted: boolean;
  sessionCreationDate: Date;
  sessionLastUpdatedDate: Date;
  sessionName: string;
}

/** A participant row's copy of its session's column: written by triggers, read by the list's statements only. */
const COPY = { insert: false, update: false, select: false } as const;

const varchar = (length: number, nullable = false) => ({ type: 'varchar' as const, length, nullable });

export function sessionEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const date = (name: string, nullable = false) => ({ ...t.datetime, name, nullable });
  /** An id column: compared byte for byte (see ColumnTypes.exactId). */
  const id = (length: number, nullable = false) => ({ ...varchar(length, nullable), ...t.exactId });
  const json = <T>(name: string, empty: T) => ({
    type: t.longText,
    name,
    transformer: jsonColumn<T>(empty),
  });

  const sessions = new EntitySchema<SessionRow>({
    name: 'AgentSession',
    tableName: 'agent_sessions',
    columns: {
      id: { ...id(36), primary: true },
      orgId: { ...id(64), name: 'org_id' },
      orgName: { ...varchar(200), name: 'org_name' },
      ownerUserId: { ...id(64), name: 'owner_user_id' },
      ownerUserName: { ...varchar(200), name: 'owner_user_name' },
      name: { ...varchar(200), ...t.caseInsensitive },
      key: { ...varchar(100, true), name: 'session_key' },
      description: { type: t.text, nullable: true },
      isPublic: { type: 'boolean', name: 'is_public', default: false },
      isDraft: { type: 'boolean', name: 'is_draft', default: false },
      isDeleted: { type: 'boolean', name: 'is_deleted', default: false },
      category: varchar(100, true),
      creationDate: date('creation_date'),
      lastUpdatedDate: date('last_updated_date'),
      agentContextId: { ...id(64), name: 'agent_context_id' },
      conversationContextId: { ...id(64, true), name: 'conversation_context_id' },
      workspaceId: { ...id(200, true), name: 'workspace_id' },
      repo: varchar(200, true),
      defaultLanguage: { ...varchar(64, true), name: 'default_language' },
      turnCount: { type: 'int', name: 'turn_count', default: 0 },
      lastTurnStatus: { ...varchar(16, true), name: 'last_turn_status' },
      lastTurnDate: date('last_turn_date', true),
      inputTokens: { type: 'bigint', name: 'input_tokens', default: 0, transformer: bigintNumber },
      outputTokens: { type: 'bigint', name: 'output_tokens', default: 0, transformer: bigintNumber },
      cachedInputTokens: { type: 'bigint', name: 'cached_input_tokens', default: 0, transformer: bigintNumber },
      estimatedCostUsd: { type: t.double, name: 'estimated_cost_usd', nullable: true },
      usageEstimated: { type: 'boolean', name: 'usage_estimated', default: false },
    },
    indices: [
      { name: 'idx_sessions_org_updated', columns: ['orgId', 'lastUpdatedDate', 'id'] },
      { name: 'idx_sessions_org_created', columns: ['orgId', 'creationDate', 'id'] },
      { name: 'idx_sessions_org_name', columns: ['orgId', 'name', 'id'] },
      { name: 'idx_sessions_org_owner', columns: ['orgId', 'ownerUserId'] },
      // The list's count reads these only: it counts from the index (SessionVisibilityIndex1764800000000).
      { name: 'idx_sessions_org_visible', columns: ['orgId', 'isDeleted', 'ownerUserId', 'isPublic', 'id'] },
      // The lists' keyset walks (ScaleLists1765100000000, sessions/session-keyset.ts).
      { name: 'idx_sessions_list_updated', columns: ['orgId', 'isDeleted', 'lastUpdatedDate', 'id', 'ownerUserId', 'isPublic', 'lastTurnStatus'] },
      { name: 'idx_sessions_list_created', columns: ['orgId', 'isDeleted', 'creationDate', 'id', 'ownerUserId', 'isPublic', 'lastTurnStatus'] },
      { name: 'idx_sessions_list_name', columns: ['orgId', 'isDeleted', 'name', 'id', 'ownerUserId', 'isPublic', 'lastTurnStatus'] },
      { name: 'idx_sessions_owner_updated', columns: ['orgId', 'isDeleted', 'ownerUserId', 'lastUpdatedDate', 'id'] },
      { name: 'idx_sessions_status_updated', columns: ['orgId', 'isDeleted', 'lastTurnStatus', 'lastUpdatedDate', 'id'] },
    ],
  });

  const turns = new EntitySchema<TurnRow>({
    name: 'AgentSessionTurn',
    tableName: 'agent_session_turns',
    columns: {
      id: { ...id(36), primary: true },
      sessionId: { ...id(36), name: 'session_id' },
      orgId: { ...id(64), name: 'org_id' },
      sequenceNumber: { type: 'int', name: 'sequence_number' },
      createdByUserId: { ...id(64), name: 'created_by_user_id' },
      createdByUserName: { ...varchar(200), name: 'created_by_user_name' },
      creationDate: date('creation_date'),
      status: varchar(16),
      statusTimeStamp: date('status_time_stamp'),
      mode: varchar(64),
      conversationId: { ...id(64, true), name: 'conversation_id' },
      openAIModel: { ...varchar(100, true), name: 'openai_model' },
      openAIResponseId: { ...id(200, true), name: 'openai_response_id' },
      previousOpenAIResponseId: { ...id(200, true), name: 'previous_openai_response_id' },
      openAIResponseReceivedDate: date('openai_response_received_date', true),
      openAIChainExpiresDate: date('openai_chain_expires_date', true),
      instructionSummary: { type: t.text, name: 'instruction_summary' },
      fullInstructionUrl: { ...varchar(512, true), name: 'full_instruction_url' },
      agentAnswerSummary: { type: t.text, name: 'agent_answer_summary', nullable: true },
      fullAgentAnswerUrl: { ...varchar(512, true), name: 'full_agent_answer_url' },
      openAIRequestPayloadUrl: { ...varchar(512, true), name: 'openai_request_payload_url' },
      openAIResponsePayloadUrl: { ...varchar(512, true), name: 'openai_response_payload_url' },
      chunkRefs: json<ChunkRef[]>('chunk_refs', []),
      activeFileRefs: json<ActiveFileRef[]>('active_file_refs', []),
      pendingToolCalls: json<ToolCall[]>('pending_tool_calls', []),
      // Added to existing tables (issue 10): rows from before read back as empty lists.
      toolCalls: { ...json<ToolCallRecord[]>('tool_call_records', []), nullable: true },
      files: { ...json<FileRef[]>('output_files', []), nullable: true },
      answeredByModel: { ...varchar(100, true), name: 'answered_by_model' },
      warnings: json<string[]>('warnings', []),
      errors: json<string[]>('errors', []),
      inputTokens: { type: 'int', name: 'input_tokens', nullable: true },
      outputTokens: { type: 'int', name: 'output_tokens', nullable: true },
      cachedInputTokens: { type: 'int', name: 'cached_input_tokens', nullable: true },
      usageEstimated: { type: 'boolean', name: 'usage_estimated', default: false },
      estimatedCostUsd: { type: t.double, name: 'estimated_cost_usd', nullable: true },
      leaseOwner: { ...varchar(64, true), name: 'lease_owner' },
      leaseExpiresAt: date('lease_expires_at', true),
      openAIChainRestartReason: { ...varchar(32, true), name: 'openai_chain_restart_reason' },
      requestMetadata: { ...json<TurnRequestMetadata>('request_metadata', NO_REQUEST_METADATA), nullable: true },
      revision: { type: 'int', default: 0 },
    },
    indices: [
      { name: 'uq_turns_session_sequence', columns: ['sessionId', 'sequenceNumber'], unique: true },
      { name: 'idx_turns_status_lease', columns: ['status', 'leaseExpiresAt'] },
    ],
  });

  const participants = new EntitySchema<ParticipantRow>({
    name: 'AgentSessionParticipant',
    tableName: 'agent_session_participants',
    columns: {
      sessionId: { ...id(36), name: 'session_id', primary: true },
      userId: { ...id(64), name: 'user_id', primary: true },
      orgId: { ...id(64), name: 'org_id' },
      userName: { ...varchar(200), name: 'user_name' },
      joinedDate: date('joined_date'),
      // The triggers write these (ParticipantLists1765400000000), never the gateway; only the
      // list's own statements read them, not the participants' batch reads.
      sessionIsDeleted: { type: 'boolean', name: 'is_deleted', default: false, ...COPY },
      sessionCreationDate: { ...date('creation_date'), default: UNCOPIED, ...COPY },
      sessionLastUpdatedDate: { ...date('last_updated_date'), default: UNCOPIED, ...COPY },
      sessionName: { ...varchar(200), ...t.caseInsensitive, name: 'name', default: '', ...COPY },
    },
    indices: [
      { name: 'idx_participants_list_updated', columns: ['orgId', 'userId', 'sessionLastUpdatedDate', 'sessionId', 'sessionIsDeleted'] },
      { name: 'idx_participants_list_created', columns: ['orgId', 'userId', 'sessionCreationDate', 'sessionId', 'sessionIsDeleted'] },
      { name: 'idx_participants_list_name', columns: ['orgId', 'userId', 'sessionName', 'sessionId', 'sessionIsDeleted'] },
    ],
  });

  return { sessions, turns, participants };
}

export type SessionEntities = ReturnType<typeof sessionEntities>;

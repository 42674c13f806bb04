import type { ChainTurn } from '../domain/chain';
import type { ChainRestartReason } from '../domain/chain-restart';
import type { FileRef } from '../domain/file-ref';
import { NO_REQUEST_METADATA, type TurnRequestMetadata } from '../domain/request-metadata';
import type { ToolCallRecord } from '../domain/tool-call-record';
import type { ActiveFileRef, ChunkRef, ToolCall } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import { booleanOf, dateOf, jsonOf, nullableDateOf, nullableNumberOf } from './raw-values';
import type { TurnRow } from './session.entities';

/**
 * Turns read as plain rows (every execute reads the session's recent turns, up to 200):
 * TypeORM's query builder and entity hydration cost more per turn than the database spent
 * answering (docs/performance.md). The columns of session.entities.ts's turns, aliased `t`.
 */
export const TURN_COLUMNS = `t.id, t.session_id, t.org_id, t.sequence_number, t.created_by_user_id, t.created_by_user_name,
  t.creation_date, t.status, t.status_time_stamp, t.mode, t.conversation_id, t.openai_model, t.openai_response_id,
  t.previous_openai_response_id, t.openai_response_received_date, t.openai_chain_expires_date, t.instruction_summary,
  t.full_instruction_url, t.agent_answer_summary, t.full_agent_answer_url, t.openai_request_payload_url,
  t.openai_response_payload_url, t.chunk_refs, t.active_file_refs, t.pending_tool_calls, t.tool_call_records,
  t.output_files, t.answered_by_model, t.warnings, t.errors, t.input_tokens, t.output_tokens, t.cached_input_tokens,
  t.usage_estimated, t.estimated_cost_usd, t.lease_owner, t.lease_expires_at, t.openai_chain_restart_reason,
  t.request_metadata, t.revision`;

type DateValue = Date | string;
type NumberValue = number | string;

/** A turn row as the drivers hand it out (see raw-values.ts). */
export interface RawTurnRow {
  readonly id: string;
  readonly session_id: string;
  readonly org_id: string;
  readonly sequence_number: NumberValue;
  readonly created_by_user_id: string;
  readonly created_by_user_name: string;
  readonly creation_date: DateValue;
  readonly status: TurnStatus;
  readonly status_time_stamp: DateValue;
  readonly mode: string;
  readonly conversation_id: string | null;
  readonly openai_model: string | null;
  readonly openai_response_id: string | null;
  readonly previous_openai_response_id: string | null;
  readonly openai_response_received_date: DateValue | null;
  readonly openai_chain_expires_date: DateValue | null;
  readonly instruction_summary: string;
  readonly full_instruction_url: string | null;
  readonly agent_answer_summary: string | null;
  readonly full_agent_answer_url: string | null;
  readonly openai_request_payload_url: string | null;
  readonly openai_response_payload_url: string | null;
  readonly chunk_refs: string | null;
  readonly active_file_refs: string | null;
  readonly pending_tool_calls: string | null;
  readonly tool_call_records: string | null;
  readonly output_files: string | null;
  readonly answered_by_model: string | null;
  readonly warnings: string | null;
  readonly errors: string | null;
  readonly input_tokens: NumberValue | null;
  readonly output_tokens: NumberValue | null;
  readonly cached_input_tokens: NumberValue | null;
  readonly usage_estimated: number | boolean | string;
  readonly estimated_cost_usd: NumberValue | null;
  readonly lease_owner: string | null;
  readonly lease_expires_at: DateValue | null;
  readonly openai_chain_restart_reason: ChainRestartReason | null;
  readonly request_metadata: string | null;
  readonly revision: NumberValue;
}

export function turnRowOf(raw: RawTurnRow): TurnRow {
  return {
    id: raw.id,
    sessionId: raw.session_id,
    orgId: raw.org_id,
    sequenceNumber: Number(raw.sequence_number),
    createdByUserId: raw.created_by_user_id,
    createdByUserName: raw.created_by_user_name,
    creationDate: dateOf(raw.creation_date),
    status: raw.status,
    statusTimeStamp: dateOf(raw.status_time_stamp),
    mode: raw.mode,
    conversationId: raw.conversation_id,
    openAIModel: raw.openai_model,
    openAIResponseId: raw.openai_response_id,
    previousOpenAIResponseId: raw.previous_openai_response_id,
    openAIResponseReceivedDate: nullableDateOf(raw.openai_response_received_date),
    openAIChainExpiresDate: nullableDateOf(raw.openai_chain_expires_date),
    instructionSummary: raw.instruction_summary,
    fullInstructionUrl: raw.full_instruction_url,
    agentAnswerSummary: raw.agent_answer_summary,
    fullAgentAnswerUrl: raw.full_agent_answer_url,
    openAIRequestPayloadUrl: raw.openai_request_payload_url,
    openAIResponsePayloadUrl: raw.openai_response_payload_url,
    chunkRefs: jsonOf<ChunkRef[]>(raw.chunk_refs, []),
    activeFileRefs: jsonOf<ActiveFileRef[]>(raw.active_file_refs, []),
    pendingToolCalls: jsonOf<ToolCall[]>(raw.pending_tool_calls, []),
    toolCalls: jsonOf<ToolCallRecord[]>(raw.tool_call_records, []),
    files: jsonOf<FileRef[]>(raw.output_files, []),
    answeredByModel: raw.answered_by_model,
    warnings: jsonOf<string[]>(raw.warnings, []),
    errors: jsonOf<string[]>(raw.errors, []),
    inputTokens: nullableNumberOf(raw.input_tokens),
    outputTokens: nullableNumberOf(raw.output_tokens),
    cachedInputTokens: nullableNumberOf(raw.cached_input_tokens),
    usageEstimated: booleanOf(raw.usage_estimated),
    estimatedCostUsd: nullableNumberOf(raw.estimated_cost_usd),
    leaseOwner: raw.lease_owner,
    leaseExpiresAt: nullableDateOf(raw.lease_expires_at),
    openAIChainRestartReason: raw.openai_chain_restart_reason,
    requestMetadata: jsonOf<TurnRequestMetadata>(raw.request_metadata, NO_REQUEST_METADATA),
    revision: Number(raw.revision),
  };
}

/** The columns of domain/chain.ts ChainTurn, aliased `t`: what the planner reads of every recent turn. */
export const CHAIN_TURN_COLUMNS = `t.id, t.sequence_number, t.status, t.conversation_id, t.openai_response_id,
  t.previous_openai_response_id, t.openai_chain_expires_date, t.active_file_refs, t.chunk_refs`;

export type RawChainTurnRow = Pick<
  RawTurnRow,
  | 'id'
  | 'sequence_number'
  | 'status'
  | 'conversation_id'
  | 'openai_response_id'
  | 'previous_openai_response_id'
  | 'openai_chain_expires_date'
  | 'active_file_refs'
  | 'chunk_refs'
>;

export function chainTurnOf(raw: RawChainTurnRow): ChainTurn {
  return {
    id: raw.id,
    sequenceNumber: Number(raw.sequence_number),
    status: raw.status,
    conversationId: raw.conversation_id,
    openAIResponseId: raw.openai_response_id,
    previousOpenAIResponseId: raw.previous_openai_response_id,
    openAIChainExpiresDate: nullableDateOf(raw.openai_chain_expires_date),
    activeFileRefs: jsonOf<ActiveFileRef[]>(raw.active_file_refs, []),
    chunkRefs: jsonOf<ChunkRef[]>(raw.chunk_refs, []),
  };
}

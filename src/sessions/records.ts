import type { SessionRollUp } from '../domain/session-usage';
import type { SessionRecord } from '../domain/session';
import { NO_REQUEST_METADATA } from '../domain/request-metadata';
import type { TurnRecord } from '../domain/turn';
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
    warnings: row.warnings,
    errors: row.errors,
    usage: hasUsage
      ? {
          inputTokens: row.inputTokens ?? 0,
          outputTokens: row.outputTokens ?? 0,
          totalTokens: (row.inputTokens ?? 0) + (row.outputTokens ?? 0),
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

export function toTurnRow(turn: TurnRecord, lease: TurnLease): TurnRow {
  return {
    id: turn.id,
    sessionId: turn.sessionId,
    orgId: turn.orgId,
    sequenceNumber: turn.sequenceNumber,
    createdByUserId: turn.createdByUser.id,
    createdByUserName: turn.createdByUser.text,
    creationDate: turn.creationDate,
    status: turn.status,
    statusTimeStamp: turn.statusTimeStamp,
    mode: turn.mode,
    conversationId: turn.conversationId,
    openAIModel: turn.openAIModel,
    openAIResponseId: turn.openAIResponseId,
    previousOpenAIResponseId: turn.previousOpenAIResponseId,
    openAIResponseReceivedDate: turn.openAIResponseReceivedDate,
    openAIChainExpiresDate: turn.openAIChainExpiresDate,
    instructionSummary: turn.instructionSummary,
    fullInstructionUrl: turn.fullInstructionUrl,
    agentAnswerSummary: turn.agentAnswerSummary,
    fullAgentAnswerUrl: turn.fullAgentAnswerUrl,
    openAIRequestPayloadUrl: turn.openAIRequestPayloadUrl,
    openAIResponsePayloadUrl: turn.openAIResponsePayloadUrl,
    chunkRefs: [...turn.chunkRefs],
    activeFileRefs: [...turn.activeFileRefs],
    pendingToolCalls: [...turn.pendingToolCalls],
    warnings: [...turn.warnings],
    errors: [...turn.errors],
    inputTokens: turn.usage?.inputTokens ?? null,
    outputTokens: turn.usage?.outputTokens ?? null,
    usageEstimated: turn.usage?.isEstimated ?? false,
    estimatedCostUsd: turn.usage?.estimatedCostUsd ?? null,
    leaseOwner: lease.owner,
    leaseExpiresAt: lease.expiresAt,
    openAIChainRestartReason: turn.openAIChainRestartReason,
    requestMetadata: turn.requestMetadata,
  };
}

/** The columns a turn's update writes: everything but its identity. */
export function turnColumns(turn: TurnRecord, lease: TurnLease): Omit<TurnRow, 'id' | 'sessionId' | 'orgId'> {
  const { id: _id, sessionId: _s, orgId: _o, ...columns } = toTurnRow(turn, lease);
  return columns;
}

/** The session columns a settled turn changes (domain `rollUpSettledTurn`). */
export function rollUpColumns(rollUp: SessionRollUp): Partial<SessionRow> {
  return {
    lastUpdatedDate: rollUp.lastUpdatedDate,
    inputTokens: rollUp.usage.inputTokens,
    outputTokens: rollUp.usage.outputTokens,
    estimatedCostUsd: rollUp.usage.estimatedCostUsd,
    usageEstimated: rollUp.usage.isEstimated,
    ...(rollUp.lastTurn ? { lastTurnStatus: rollUp.lastTurn.status, lastTurnDate: rollUp.lastTurn.date } : {}),
  };
}

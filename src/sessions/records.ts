import type { SessionRecord } from '../domain/session';
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
  };
}

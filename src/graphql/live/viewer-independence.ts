import { getNamedType, getOperationAST, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from 'graphql';

/**
 * Fields reachable from the subscriptions whose value, on an event the subscriber may have,
 * is the same whoever asks: they describe the event's own session and turns (a reader of the
 * session reads all of them alike) or org-wide records (contexts). A selection made only of
 * these is executed once per event for subscribers of every viewer (issue 35.8); each
 * subscriber's access is still checked per event (LiveSource.admitViewers).
 */
export const SAME_FOR_EVERY_READER: Readonly<Record<string, readonly string[]>> = {
  Subscription: ['turnStatusChanged', 'sessionActivity', 'turnOutput'],
  TurnStatusChangedEvent: ['createdByUser', 'eventId', 'previousStatus', 'sequenceNumber', 'session', 'sessionId', 'status', 'statusTimeStamp', 'turn', 'turnId'],
  TurnOutputDelta: ['index', 'sessionId', 'textDelta', 'toolCall', 'turnId'],
  AgentSessionTurn: [
    'activeFileRefs', 'agentAnswerSummary', 'answeredByModel', 'chunkRefs', 'conversationId', 'createdByUser', 'creationDate', 'errors', 'files',
    'fullAgentAnswerUrl', 'fullInstructionUrl', 'id', 'inheritedFrom', 'instructionSummary', 'mode', 'openAIChainExpiresDate', 'openAIChainRestartReason',
    'openAIModel', 'openAIRequestPayloadUrl', 'openAIResponseId', 'openAIResponsePayloadUrl', 'openAIResponseReceivedDate', 'pendingToolCalls',
    'previousOpenAIResponseId', 'retrievalPathPrefixes', 'sequenceNumber', 'session', 'sessionId', 'skippedSnippets', 'status', 'statusTimeStamp',
    'toolCalls', 'usage', 'warnings',
  ],
  AgentSession: [
    'agentContext', 'agentContextId', 'agentContextName', 'category', 'conversationContext', 'conversationContextId', 'conversationContextName',
    'creationDate', 'defaultLanguage', 'description', 'forkedFrom', 'id', 'inheritedUsage', 'isDeleted', 'isDraft', 'isPublic', 'key', 'lastTurn',
    'lastUpdatedDate', 'name', 'ownerOrganization', 'ownerUser', 'participants', 'repo', 'summary', 'turnCount', 'turns', 'usage', 'workspaceId',
  ],
  AgentSessionSummary: [
    'agentContext', 'agentContextId', 'agentContextName', 'category', 'conversationContext', 'conversationContextId', 'conversationContextName',
    'description', 'id', 'isPublic', 'key', 'lastTurn', 'lastTurnDate', 'lastTurnStatus', 'lastUpdatedDate', 'name', 'ownerUser', 'participants', 'turnCount',
  ],
  AgentSessionTurnConnection: ['edges', 'pageInfo', 'totalCount'],
  AgentSessionTurnEdge: ['cursor', 'node'],
  PageInfo: ['endCursor', 'hasNextPage', 'hasPreviousPage', 'startCursor'],
  TurnUsage: ['cachedInputTokens', 'estimatedCostUsd', 'inputTokens', 'isEstimated', 'outputTokens', 'totalTokens'],
  ToolCallRecord: ['argumentsJson', 'executionMs', 'id', 'name', 'origin', 'resultSummary', 'status'],
  ToolCall: ['arguments', 'argumentsJson', 'name', 'toolCallId'],
  AgentSessionSkippedSnippet: ['chunkId', 'contentHash', 'endLine', 'path', 'reason', 'startLine'],
  AgentSessionChunkRef: ['chunkId', 'contentHash', 'endLine', 'fileContentHash', 'path', 'score', 'startLine'],
  AgentSessionActiveFileRef: ['contentHash', 'isTouched', 'path', 'sizeBytes', 'wasSentToLLM', 'wasTooLargeToSend'],
  FileRef: ['contentExpires', 'contentHash', 'description', 'mimeType', 'name', 'sizeBytes', 'url'],
  EntityHeader: ['id', 'text'],
  AgentContext: ['defaultModel', 'description', 'id', 'name', 'vectorCollection'],
  ConversationContext: ['description', 'id', 'model', 'name', 'systemPrompt', 'temperature', 'tools'],
  ToolDefinition: ['description', 'name', 'parametersJson'],
};

/**
 * Fields reachable from the subscriptions whose value depends on who asks: other sessions,
 * each shown only to those who may read it. A selection with any of these (or with a field
 * listed in neither table, a new one say) is executed per viewer, as before.
 */
export const DEPENDS_ON_VIEWER: Readonly<Record<string, readonly string[]>> = {
  AgentSession: ['forks'],
  SessionForkOrigin: ['session', 'turn'],
  // Only reached through `forks`.
  AgentSessionSummaryConnection: ['edges', 'pageInfo', 'totalCount', 'totalCountIsLowerBound'],
  AgentSessionSummaryEdge: ['cursor', 'node'],
};

const shared = new Map(Object.entries(SAME_FOR_EVERY_READER).map(([type, fields]) => [type, new Set(fields)]));
const verdicts = new WeakMap<DocumentNode, Map<string, boolean>>();

/** Whether the operation's result on an event is the same for every subscriber who may have the event. */
export function sameForEveryReader(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): boolean {
  let byName = verdicts.get(document);
  if (!byName) verdicts.set(document, (byName = new Map<string, boolean>()));
  const key = operationName ?? '';
  let verdict = byName.get(key);
  if (verdict === undefined) {
    verdict = decide(schema, document, operationName);
    byName.set(key, verdict);
  }
  return verdict;
}

function decide(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): boolean {
  if (!getOperationAST(document, operationName)) return false;
  let independent = true;
  const typeInfo = new TypeInfo(schema);
  // Every operation and fragment of the document: one that this operation does not use only makes the answer more cautious.
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const name = node.name.value;
        if (name === '__typename') return;
        const parent = typeInfo.getParentType();
        const parentName = parent ? getNamedType(parent).name : null;
        if (parentName === null || !shared.get(parentName)?.has(name)) independent = false;
      },
    }),
  );
  return independent;
}

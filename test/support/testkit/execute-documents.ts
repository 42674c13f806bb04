import type { ChunkRef } from '../../../src/domain/turn';

export const READ_FILE_TOOL = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  parametersJson: '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}',
};

export const EXECUTE = `mutation Execute($input: AgentExecuteInput!) {
  execute(input: $input) {
    __typename
    ... on AgentFinalResponse {
      kind sessionId turnId modeDisplayName primaryOutputText userWarnings
      files { url } toolResults { toolCallId }
      usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
    }
    ... on AgentToolContinuation { kind sessionId turnId modeDisplayName toolCalls { toolCallId name argumentsJson arguments } toolContinuationMessage }
  }
}`;

export const EXECUTE_ASYNC = `mutation ExecuteAsync($input: AgentExecuteInput!) { executeAsync(input: $input) { sessionId turnId sequenceNumber } }`;

export const TURN = `query Turn($sessionId: ID!, $turnId: ID!) {
  agentSessionTurn(sessionId: $sessionId, turnId: $turnId) {
    id sessionId sequenceNumber status mode conversationId openAIModel openAIResponseId previousOpenAIResponseId
    openAIResponseReceivedDate openAIChainExpiresDate instructionSummary fullInstructionUrl agentAnswerSummary
    fullAgentAnswerUrl openAIRequestPayloadUrl openAIResponsePayloadUrl warnings errors creationDate statusTimeStamp
    chunkRefs { chunkId path startLine endLine contentHash score }
    activeFileRefs { path contentHash sizeBytes isTouched wasSentToLLM wasTooLargeToSend }
    pendingToolCalls { toolCallId name argumentsJson }
    usage { inputTokens outputTokens totalTokens estimatedCostUsd isEstimated }
    createdByUser { id }
  }
}`;

export interface TurnView {
  id: string;
  sessionId: string;
  sequenceNumber: number;
  status: string;
  mode: string;
  conversationId: string | null;
  openAIModel: string | null;
  openAIResponseId: string | null;
  previousOpenAIResponseId: string | null;
  openAIResponseReceivedDate: string | null;
  openAIChainExpiresDate: string | null;
  instructionSummary: string;
  fullInstructionUrl: string | null;
  agentAnswerSummary: string | null;
  fullAgentAnswerUrl: string | null;
  openAIRequestPayloadUrl: string | null;
  openAIResponsePayloadUrl: string | null;
  warnings: string[];
  errors: string[];
  creationDate: string;
  statusTimeStamp: string;
  chunkRefs: ChunkRef[];
  activeFileRefs: { path: string; contentHash: string; sizeBytes: number; isTouched: boolean; wasSentToLLM: boolean; wasTooLargeToSend: boolean }[];
  pendingToolCalls: { toolCallId: string; name: string; argumentsJson: string }[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; estimatedCostUsd: number | null; isEstimated: boolean } | null;
  createdByUser: { id: string };
}

export interface ExecuteAnswer {
  __typename: 'AgentFinalResponse' | 'AgentToolContinuation';
  kind: 'FINAL' | 'CLIENT_TOOL_CONTINUATION';
  sessionId: string;
  turnId: string;
  modeDisplayName: string;
  primaryOutputText?: string;
  userWarnings?: string[] | null;
  files?: unknown;
  toolResults?: unknown;
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number; estimatedCostUsd: number | null; isEstimated: boolean } | null;
  toolCalls?: { toolCallId: string; name: string; argumentsJson: string; arguments: unknown }[];
  toolContinuationMessage?: string | null;
}

/** The user message text of a recorded provider request (the last input message of role user). */
export function userTextOf(body: Record<string, unknown>): string {
  const input = (body.input ?? []) as { type?: string; role?: string; content?: unknown }[];
  const users = input.filter((i) => i.type === 'message' && i.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : '';
}

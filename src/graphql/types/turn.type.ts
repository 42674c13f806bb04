import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import { ID } from '../scalars/id.scalar';
import { Node } from './node.type';
import type { ChainRestartReason } from '../../domain/chain-restart';
import type { SnippetSkipReason } from '../../domain/request-metadata';
import type { ToolCallOrigin as ToolCallOriginValue, ToolCallStatus as ToolCallStatusValue } from '../../domain/tool-call-record';
import type { TurnStatus } from '../../domain/turn-status';
import { EntityHeader, PageInfo } from './common.type';
import { AgentSessionTurnStatus, OpenAIChainRestartReason, SkippedSnippetReason } from './enums';
import { FileRef } from './file-ref.type';

@ObjectType({ simpleResolvers: true })
export class AgentSessionChunkRef {
  @Field(() => ID) chunkId!: string;
  @Field(() => String) path!: string;
  @Field(() => Int) startLine!: number;
  @Field(() => Int) endLine!: number;
  @Field(() => String, { description: 'SHA-256 of the chunk text.' }) contentHash!: string;
  @Field(() => Float, { nullable: true }) score!: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'SHA-256 of the whole file the chunk was cut from, when the index recorded it (see turnsUsingFile).',
  })
  fileContentHash?: string | null;
}

@ObjectType({ simpleResolvers: true })
export class AgentSessionActiveFileRef {
  @Field(() => String) path!: string;
  @Field(() => String) contentHash!: string;
  @Field(() => Int) sizeBytes!: number;
  @Field(() => Boolean) isTouched!: boolean;
  @Field(() => Boolean) wasSentToLLM!: boolean;
  @Field(() => Boolean) wasTooLargeToSend!: boolean;
}

@ObjectType({ simpleResolvers: true, description: 'A retrieved snippet recorded on the turn but not sent to the model.' })
export class AgentSessionSkippedSnippet {
  @Field(() => ID) chunkId!: string;
  @Field(() => String) path!: string;
  @Field(() => Int) startLine!: number;
  @Field(() => Int) endLine!: number;
  @Field(() => String) contentHash!: string;
  @Field(() => SkippedSnippetReason) reason!: SnippetSkipReason;
}

@ObjectType({ simpleResolvers: true })
export class ToolCall {
  @Field(() => ID) toolCallId!: string;
  @Field(() => String) name!: string;
  @Field(() => String) argumentsJson!: string;
}

export const ToolCallOrigin: { [K in ToolCallOriginValue]: K } = { SERVER: 'SERVER', CLIENT: 'CLIENT' };
registerEnumType(ToolCallOrigin, {
  name: 'ToolCallOrigin',
  valuesConfig: {
    SERVER: { description: 'A built-in tool the gateway ran itself (write_file, search_code).' },
    CLIENT: { description: 'A conversation tool the client ran (AGN-033 continuation).' },
  },
});

export const ToolCallStatus: { [K in ToolCallStatusValue]: K } = {
  RUNNING: 'RUNNING',
  WAITING_FOR_CLIENT: 'WAITING_FOR_CLIENT',
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  ABANDONED: 'ABANDONED',
};
registerEnumType(ToolCallStatus, {
  name: 'ToolCallStatus',
  valuesConfig: {
    FAILED: { description: 'The tool ran and reported an error (bad arguments included); the model received the error.' },
    ABANDONED: { description: 'The turn ended before the call had a result.' },
  },
});

@ObjectType({ description: 'One tool call of a turn and its result (spec 004 section 7 audit trail).', simpleResolvers: true })
export class ToolCallRecord {
  @Field(() => ID) id!: string;
  @Field(() => String) name!: string;
  @Field(() => ToolCallOrigin) origin!: ToolCallOriginValue;
  @Field(() => String, { description: 'The arguments the model sent, at most 4,096 characters (all of them are in the raw response payload).' })
  argumentsJson!: string;
  @Field(() => String, { nullable: true, description: 'The result or error the model received, at most 1,024 characters; null until there is one.' })
  resultSummary!: string | null;
  @Field(() => Int, { nullable: true, description: 'Measured by the gateway for server tools, reported by the client for client tools.' })
  executionMs!: number | null;
  @Field(() => ToolCallStatus) status!: ToolCallStatusValue;
}

@ObjectType({ simpleResolvers: true })
export class TurnUsage {
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) totalTokens!: number;
  @Field(() => Int, { description: 'Input tokens the provider served from its prompt cache (part of inputTokens), priced at the cached rate.' })
  cachedInputTokens!: number;
  @Field(() => Float, { nullable: true }) estimatedCostUsd!: number | null;
  @Field(() => Boolean, {
    description: 'True when the provider reported no token counts (for a session: for some turn) and they were estimated as ceil(characters / 4).',
  })
  isEstimated!: boolean;
}

@ObjectType({ implements: Node, simpleResolvers: true })
export class AgentSessionTurn {
  @Field(() => ID) id!: string;
  @Field(() => ID) sessionId!: string;
  @Field(() => Int) sequenceNumber!: number;
  @Field(() => EntityHeader) createdByUser!: EntityHeader;
  @Field(() => Date) creationDate!: Date;
  @Field(() => AgentSessionTurnStatus) status!: TurnStatus;
  @Field(() => Date) statusTimeStamp!: Date;
  @Field(() => String) mode!: string;
  @Field(() => String, { nullable: true }) conversationId!: string | null;
  @Field(() => String, { nullable: true }) openAIModel!: string | null;
  @Field(() => String, { nullable: true }) openAIResponseId!: string | null;
  @Field(() => String, { nullable: true }) previousOpenAIResponseId!: string | null;
  @Field(() => Date, { nullable: true }) openAIResponseReceivedDate!: Date | null;
  @Field(() => Date, { nullable: true }) openAIChainExpiresDate!: Date | null;
  @Field(() => String) instructionSummary!: string;
  @Field(() => String, { nullable: true }) fullInstructionUrl!: string | null;
  @Field(() => String, { nullable: true }) agentAnswerSummary!: string | null;
  @Field(() => String, { nullable: true }) fullAgentAnswerUrl!: string | null;
  @Field(() => String, { nullable: true }) openAIRequestPayloadUrl!: string | null;
  @Field(() => String, { nullable: true }) openAIResponsePayloadUrl!: string | null;
  @Field(() => [AgentSessionChunkRef]) chunkRefs!: AgentSessionChunkRef[];
  @Field(() => [AgentSessionActiveFileRef]) activeFileRefs!: AgentSessionActiveFileRef[];
  @Field(() => [ToolCall], {
    description: 'Client tool calls this PENDING turn is waiting on (AGN-033 continuation); empty otherwise.',
  })
  pendingToolCalls!: ToolCall[];
  @Field(() => [ToolCallRecord], { description: 'Every tool call of the turn, server or client, in the order the model made them; kept after the turn ends.' })
  toolCalls!: ToolCallRecord[];
  @Field(() => [FileRef], { description: 'Files the turn\'s server tools wrote (write_file); the same FileRefs as the final response\'s files.' })
  files!: FileRef[];
  @Field(() => String, { nullable: true, description: 'The model the provider says answered (a dated snapshot name), next to the requested openAIModel.' })
  answeredByModel!: string | null;
  @Field(() => [String]) warnings!: string[];
  @Field(() => [String]) errors!: string[];
  @Field(() => TurnUsage, { nullable: true }) usage!: TurnUsage | null;
  @Field(() => OpenAIChainRestartReason, {
    nullable: true,
    description: "Why this turn's provider conversation started afresh; null when it continued the session's chain.",
  })
  openAIChainRestartReason!: ChainRestartReason | null;
}

@ObjectType({ simpleResolvers: true })
export class AgentSessionTurnEdge {
  @Field(() => String) cursor!: string;
  @Field(() => AgentSessionTurn) node!: AgentSessionTurn;
}

@ObjectType()
export class AgentSessionTurnConnection {
  @Field(() => [AgentSessionTurnEdge]) edges!: AgentSessionTurnEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int) totalCount!: number;
}

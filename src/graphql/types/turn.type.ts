import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import type { ChainRestartReason } from '../../domain/chain-restart';
import type { SnippetSkipReason } from '../../domain/request-metadata';
import type { TurnStatus } from '../../domain/turn-status';
import { EntityHeader, PageInfo } from './common.type';
import { AgentSessionTurnStatus, OpenAIChainRestartReason, SkippedSnippetReason } from './enums';

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

@ObjectType({ simpleResolvers: true })
export class TurnUsage {
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) totalTokens!: number;
  @Field(() => Float, { nullable: true }) estimatedCostUsd!: number | null;
  @Field(() => Boolean, {
    description: 'True when the provider reported no token counts (for a session: for some turn) and they were estimated as ceil(characters / 4).',
  })
  isEstimated!: boolean;
}

@ObjectType({ simpleResolvers: true })
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

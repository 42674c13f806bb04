import type { EntityHeader } from './caller';
import type { ChainRestartReason } from './chain-restart';
import type { FileRef } from './file-ref';
import type { TurnRequestMetadata } from './request-metadata';
import type { ToolCallRecord } from './tool-call-record';
import type { TurnStatus } from './turn-status';
import type { TurnUsage } from './usage';

export interface ChunkRef {
  readonly chunkId: string;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  /** SHA-256 of the chunk's text. */
  readonly contentHash: string;
  readonly score: number | null;
  /** SHA-256 of the whole file the chunk was cut from, when the index knows it (provenance). */
  readonly fileContentHash?: string | null;
}

export interface ActiveFileRef {
  readonly path: string;
  readonly contentHash: string;
  readonly sizeBytes: number;
  readonly isTouched: boolean;
  readonly wasSentToLLM: boolean;
  readonly wasTooLargeToSend: boolean;
}

export interface ToolCall {
  readonly toolCallId: string;
  readonly name: string;
  readonly argumentsJson: string;
}

/** AGN-033 5.2: exactly one of result or error. */
export type ToolOutcome =
  | { readonly kind: 'result'; readonly resultJson: string }
  | { readonly kind: 'error'; readonly errorMessage: string };

export interface ToolResult {
  readonly toolCallId: string;
  readonly executionMs: number;
  readonly outcome: ToolOutcome;
}

/** DD-002B: one instruction and its answer. */
export interface TurnRecord {
  readonly id: string;
  readonly sessionId: string;
  readonly orgId: string;
  readonly sequenceNumber: number;
  readonly createdByUser: EntityHeader;
  readonly creationDate: Date;
  readonly status: TurnStatus;
  readonly statusTimeStamp: Date;
  readonly mode: string;
  readonly conversationId: string | null;
  readonly openAIModel: string | null;
  readonly openAIResponseId: string | null;
  readonly previousOpenAIResponseId: string | null;
  readonly openAIResponseReceivedDate: Date | null;
  readonly openAIChainExpiresDate: Date | null;
  readonly instructionSummary: string;
  readonly fullInstructionUrl: string | null;
  readonly agentAnswerSummary: string | null;
  readonly fullAgentAnswerUrl: string | null;
  readonly openAIRequestPayloadUrl: string | null;
  readonly openAIResponsePayloadUrl: string | null;
  readonly chunkRefs: readonly ChunkRef[];
  readonly activeFileRefs: readonly ActiveFileRef[];
  readonly pendingToolCalls: readonly ToolCall[];
  /** Spec 004 section 7: every tool call of the turn, server or client, kept after it ends. */
  readonly toolCalls: readonly ToolCallRecord[];
  /** Files the turn's server tools wrote (AGN-033 6). */
  readonly files: readonly FileRef[];
  /** The model the provider says answered (a dated name), next to the requested openAIModel. */
  readonly answeredByModel: string | null;
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
  readonly usage: TurnUsage | null;
  /** Why this turn's provider chain started; null when it continued one (issue 10). */
  readonly openAIChainRestartReason: ChainRestartReason | null;
  readonly requestMetadata: TurnRequestMetadata;
}

/** What a provider round adds to a turn besides its answer: tool calls, files, the answering model. */
export interface TurnWork {
  readonly toolCallRecords?: readonly ToolCallRecord[];
  readonly files?: readonly FileRef[];
  readonly answeredByModel?: string | null;
}

/** DD-002A: what the orchestrator supplies when it adds a PENDING turn. */
export interface NewTurn {
  readonly id?: string;
  readonly instructionSummary: string;
  readonly mode?: string;
  readonly conversationId?: string | null;
  readonly openAIModel?: string | null;
  readonly previousOpenAIResponseId?: string | null;
  readonly fullInstructionUrl?: string | null;
  readonly chunkRefs?: readonly ChunkRef[];
  readonly activeFileRefs?: readonly ActiveFileRef[];
  readonly warnings?: readonly string[];
  readonly openAIChainRestartReason?: ChainRestartReason | null;
  readonly requestMetadata?: TurnRequestMetadata;
}

/** DD-002B. */
export interface TurnCompletion extends TurnWork {
  readonly agentAnswerSummary: string;
  readonly fullAgentAnswerUrl: string | null;
  readonly openAIResponseId: string | null;
  readonly openAIResponseReceivedDate: Date;
  readonly openAIChainExpiresDate?: Date | null;
  readonly openAIRequestPayloadUrl?: string | null;
  readonly openAIResponsePayloadUrl?: string | null;
  readonly warnings?: readonly string[];
  readonly usage?: TurnUsage | null;
}

/** DD-002C. */
export interface TurnFailure extends TurnWork {
  readonly errors: readonly string[];
  readonly warnings?: readonly string[];
  readonly openAIResponseId?: string | null;
  readonly openAIResponseReceivedDate?: Date | null;
  readonly openAIChainExpiresDate?: Date | null;
  readonly openAIRequestPayloadUrl?: string | null;
  readonly openAIResponsePayloadUrl?: string | null;
  readonly usage?: TurnUsage | null;
}

export interface TurnCancellation extends TurnWork {
  readonly reason: string;
  /** Tokens spent before the stop: as reported, else estimated. */
  readonly usage?: TurnUsage | null;
  /** Blob URL of the partial answer produced before the stop, if any. */
  readonly fullAgentAnswerUrl?: string | null;
  readonly agentAnswerSummary?: string | null;
}

/** A PENDING turn that now waits for the client to run these tools (AGN-033 continuation). */
export interface TurnToolPause extends TurnWork {
  readonly toolCalls: readonly ToolCall[];
  /** The provider response that asked for the calls; the continuation chains onto it. */
  readonly openAIResponseId: string;
  readonly openAIChainExpiresDate: Date;
  /** After this the turn is FAILED by the sweeper (TOOL_RESULT_TIMEOUT_SECONDS). */
  readonly waitUntil: Date;
  /** Usage of the provider calls made for the turn so far. */
  readonly usage: TurnUsage | null;
  readonly openAIRequestPayloadUrl: string | null;
  readonly openAIResponsePayloadUrl: string | null;
}

/** A PENDING turn whose lease ran out: its instance died, or its client never sent tool results. */
export interface ExpiredTurn {
  readonly orgId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly waitingForToolResults: boolean;
}

/** A PENDING turn whose provider chain was lost: it retries once on a new, preloaded chain (issue 10). */
export interface TurnChainRestart {
  readonly reason: ChainRestartReason;
  /** The files as the retried request delivers them (a new chain re-sends what the old one held). */
  readonly activeFileRefs: readonly ActiveFileRef[];
  /** The retrieved chunks the retry keeps (a new chain holds more active files, so it may skip more). */
  readonly chunkRefs: readonly ChunkRef[];
  readonly requestMetadata: TurnRequestMetadata;
  readonly warnings: readonly string[];
}

/**
 * What the instance that ran a turn cancelled from another instance keeps once it notices:
 * the partial answer (null when no text had streamed) and what the turn spent (spec 003).
 */
export interface TurnPartialAnswer {
  readonly fullAgentAnswerUrl: string | null;
  readonly agentAnswerSummary: string | null;
  /** The turn's usage with the interrupted round (reported or estimated); null when unknown. */
  readonly usage?: TurnUsage | null;
}

import type { ToolDefinition } from '../domain/contexts';
import type { ReportedUsage } from '../domain/pricing';
import { DomainError } from '../domain/errors';
import type { ToolCall } from '../domain/turn';

/** A text message of the conversation sent to the model. */
export interface LlmMessage {
  readonly type: 'message';
  readonly role: 'user' | 'assistant';
  readonly text: string;
}

/** The output of a client tool, answering a call the model made on the previous response. */
export interface LlmToolOutput {
  readonly type: 'function_call_output';
  readonly callId: string;
  readonly output: string;
}

/** A call the model made, repeated as input when a new chain must carry it (the old one was lost). */
export interface LlmToolCallItem {
  readonly type: 'function_call';
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
}

export type LlmInputItem = LlmMessage | LlmToolCallItem | LlmToolOutput;

/** One provider call, provider-neutral. The orchestrator builds it; adapters translate it. */
export interface LlmRequest {
  readonly model: string;
  /** The conversation context's system prompt; sent on every call (it does not chain). */
  readonly instructions: string | null;
  readonly temperature: number | null;
  /** Spec 001 section 8: continue this provider conversation; null starts a new one. */
  readonly previousResponseId: string | null;
  readonly input: readonly LlmInputItem[];
  /** Client tools the model may call (AGN-033 continuation). */
  readonly tools: readonly ToolDefinition[];
}

export interface LlmCallOptions {
  /** Aborts the call (cancellation, shutdown). */
  readonly signal: AbortSignal;
  /** Every piece of answer text, as the provider streams it. */
  readonly onTextDelta: (text: string) => void;
}

export interface LlmResponse {
  readonly responseId: string;
  /** The model the provider says answered (OpenAI: the dated snapshot name). */
  readonly model: string;
  /** The whole answer text (empty when the model only called tools). */
  readonly text: string;
  /** Client tool calls, in the order the model made them. */
  readonly toolCalls: readonly ToolCall[];
  /** Token counts as the provider reported them; null when it did not. */
  readonly usage: ReportedUsage | null;
  /** The provider's final response object, stored as the raw response payload. */
  readonly raw: unknown;
}

export type LlmFailureKind =
  /** The call did not finish within LLM_TIMEOUT_MS. */
  | 'timeout'
  /** The caller aborted it (signal). */
  | 'aborted'
  /** previous_response_id is unknown to the provider (its state expired early). */
  | 'chain_lost'
  /** Anything else the provider or the network did; the message says what, for humans. */
  | 'failed';

/**
 * A provider failure, already phrased for the turn's errors (LLM_TIMEOUT for a timeout,
 * LLM_FAILED otherwise). Never carries credentials. `provider` holds what the provider said
 * (its response id, the raw payload) for the turn's record, never for clients.
 */
export class LlmError extends DomainError {
  constructor(
    readonly kind: LlmFailureKind,
    message: string,
    readonly provider: {
      readonly responseId?: string | null;
      readonly raw?: unknown;
      /** Tokens the provider reported for the failed response, when it did. */
      readonly usage?: ReportedUsage | null;
      readonly model?: string | null;
    } = {},
  ) {
    super(kind === 'timeout' ? 'LLM_TIMEOUT' : 'LLM_FAILED', message);
    this.name = 'LlmError';
  }
}

/** Port: the orchestrator's only view of the model. Adapters: OpenAI Responses API, offline. */
export interface LanguageModel {
  /** The model name recorded on turns and priced; adapters that are not a real model say so. */
  modelFor(requested: string): string;
  /** The JSON body this adapter sends for `request` (stored as the raw request payload). */
  payloadOf(request: LlmRequest): Record<string, unknown>;
  respond(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse>;
}

import type { FileRef } from './file-ref';
import type { ToolCall, ToolResult } from './turn';
import type { TurnUsage } from './usage';

/** AGN-033 3.1: every successful response carries these. */
interface SessionMetadata {
  readonly sessionId: string;
  readonly turnId: string;
  readonly modeDisplayName: string;
}

/**
 * AGN-033 3.4, kind `final`: PrimaryOutputText is required and is the FULL answer (DD-005:
 * never truncated). Allowed buckets are optional keys: an absent bucket is meaningful, so
 * they are left out rather than set empty. ToolCalls / ToolContinuationMessage do not exist.
 */
export interface FinalResponse extends SessionMetadata {
  readonly kind: 'final';
  readonly primaryOutputText: string;
  readonly files?: readonly FileRef[];
  readonly toolResults?: readonly ToolResult[];
  readonly userWarnings?: readonly string[];
  readonly usage?: TurnUsage;
}

/** AGN-033 3.4, kind `client_tool_continuation`: only the calls and an optional message. */
export interface ToolContinuationResponse extends SessionMetadata {
  readonly kind: 'client_tool_continuation';
  readonly toolCalls: readonly ToolCall[];
  readonly toolContinuationMessage?: string;
}

export type ExecuteResponse = FinalResponse | ToolContinuationResponse;

/** executeAsync: the PENDING turn exists; the outcome follows over subscriptions. */
export interface ExecuteAccepted {
  readonly sessionId: string;
  readonly turnId: string;
  readonly sequenceNumber: number;
}

/** Display only (AGN-033 3.1: clients must not branch on it): "ask" -> "Ask", "code_review" -> "Code review". */
export function modeDisplayName(mode: string): string {
  const words = mode.replace(/[_-]+/g, ' ').trim();
  return words.length === 0 ? mode : words.charAt(0).toUpperCase() + words.slice(1);
}

export function finalResponse(
  meta: { sessionId: string; turnId: string; mode: string },
  answer: {
    text: string;
    warnings: readonly string[];
    usage: TurnUsage | null;
    files?: readonly FileRef[];
    /** Server-executed tool results (AGN-033 5.3). */
    toolResults?: readonly ToolResult[];
  },
): FinalResponse {
  return {
    kind: 'final',
    sessionId: meta.sessionId,
    turnId: meta.turnId,
    modeDisplayName: modeDisplayName(meta.mode),
    primaryOutputText: answer.text,
    ...(answer.files && answer.files.length > 0 ? { files: [...answer.files] } : {}),
    ...(answer.toolResults && answer.toolResults.length > 0 ? { toolResults: [...answer.toolResults] } : {}),
    ...(answer.warnings.length > 0 ? { userWarnings: [...answer.warnings] } : {}),
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
}

export function toolContinuation(
  meta: { sessionId: string; turnId: string; mode: string },
  toolCalls: readonly ToolCall[],
  message: string,
): ToolContinuationResponse {
  return {
    kind: 'client_tool_continuation',
    sessionId: meta.sessionId,
    turnId: meta.turnId,
    modeDisplayName: modeDisplayName(meta.mode),
    toolCalls: [...toolCalls],
    ...(message.trim().length > 0 ? { toolContinuationMessage: message } : {}),
  };
}

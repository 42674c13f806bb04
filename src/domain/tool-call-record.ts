/** Who ran a tool call: the gateway itself (server tools) or the client (AGN-033 continuation). */
export type ToolCallOrigin = 'SERVER' | 'CLIENT';

export type ToolCallStatus =
  /** A server tool is running. */
  | 'RUNNING'
  /** The turn waits for the client to run it. */
  | 'WAITING_FOR_CLIENT'
  | 'COMPLETED'
  /** The tool ran and reported an error (bad arguments included); the model got the error. */
  | 'FAILED'
  /** The turn ended before the call had a result. */
  | 'ABANDONED';

export const TOOL_CALL_STATUSES: readonly ToolCallStatus[] = ['RUNNING', 'WAITING_FOR_CLIENT', 'COMPLETED', 'FAILED', 'ABANDONED'];

/** Arguments kept per call: the full arguments are in the raw response payload. */
export const MAX_RECORDED_ARGUMENTS = 4_096;

/** Spec 004 section 7: one tool call of a turn and its result, kept after the turn ends. */
export interface ToolCallRecord {
  readonly id: string;
  readonly name: string;
  readonly origin: ToolCallOrigin;
  /** The call's arguments, at most MAX_RECORDED_ARGUMENTS characters. */
  readonly argumentsJson: string;
  /** The result (or error) as the model received it, at most 1,024 characters; null until there is one. */
  readonly resultSummary: string | null;
  readonly executionMs: number | null;
  readonly status: ToolCallStatus;
  /**
   * A client call: which of the turn's client-tool rounds asked for it (1 for the turn's
   * first pause). Calls recorded before rounds were numbered have none and count as round 1.
   */
  readonly clientRound?: number;
  /**
   * A server tool's output not yet sent to the model, because the same response also asked
   * the client for tools: it goes with the client's results. Never leaves the gateway.
   */
  readonly pendingOutput?: string | null;
}

/** A tool call as published live while the turn runs (turnOutput items of kind TOOL_CALL). */
export type ToolCallEvent = Omit<ToolCallRecord, 'pendingOutput' | 'clientRound'>;

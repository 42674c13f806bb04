import type { ActiveFileSubmission } from '../domain/active-files';
import type { Caller } from '../domain/caller';
import type { ExecuteAccepted, ExecuteResponse } from '../domain/execute-response';
import type { ToolResultSubmission } from '../domain/tool-results';

/**
 * The canonical orchestrator input (DD-001). The request handler builds it from any client
 * kind and transport; past this point nothing knows which client called.
 */
export type OrchestratorRequest = InstructionRequest | ToolResultsRequest | RerunRequest;

/** A human instruction: a new turn, in a new or an existing session. */
export interface InstructionRequest {
  readonly kind: 'instruction';
  readonly caller: Caller;
  readonly sessionId: string | null;
  readonly agentContextId: string;
  readonly conversationContextId: string | null;
  readonly instruction: string;
  readonly mode: string;
  readonly workspaceId: string | null;
  readonly repo: string | null;
  readonly language: string | null;
  readonly sessionName: string | null;
  readonly activeFiles: readonly ActiveFileSubmission[];
  /** Spec 001 section 4.2: retrieval restricted to these path prefixes; null searches everything. */
  readonly retrievalPathPrefixes: readonly string[] | null;
  /** AGN-033 follow-on shape: the turn this instruction follows (must be the session's latest finished turn). */
  readonly followsTurnId: string | null;
}

/** AGN-033 follow-on: results for the client tools a PENDING turn asked for. */
export interface ToolResultsRequest {
  readonly kind: 'tool_results';
  readonly caller: Caller;
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolResults: readonly ToolResultSubmission[];
}

/** DD-006: a new turn from an old one, with the same or a new instruction and fresh context. */
export interface RerunRequest {
  readonly kind: 'rerun';
  readonly caller: Caller;
  readonly sessionId: string;
  readonly turnId: string;
  readonly instruction: string | null;
  /** Updated active files; null reuses the old turn's files (as path + hash). */
  readonly activeFiles: readonly ActiveFileSubmission[] | null;
  /** A new retrieval scope; undefined reuses the old turn's (null or empty: search everything). */
  readonly retrievalPathPrefixes: readonly string[] | null | undefined;
}

/** A turn that is under way: it exists (PENDING) and its outcome is pending. */
export interface StartedTurn {
  readonly accepted: ExecuteAccepted;
  readonly outcome: Promise<ExecuteResponse>;
}

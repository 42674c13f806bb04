import { normalisePath, type ActiveFileSubmission } from '../domain/active-files';
import type { Caller } from '../domain/caller';
import { badInput, DomainError, isDomainError, UnavailableError } from '../domain/errors';
import type { ExecuteAccepted, ExecuteResponse } from '../domain/execute-response';
import { inputFingerprint, parseIdempotencyKey } from '../domain/idempotency';
import { parseRetrievalPathPrefixes } from '../domain/retrieval-scope';
import type { ToolResultSubmission } from '../domain/tool-results';
import type { TurnRecord } from '../domain/turn';
import { optionalId, requireId } from '../domain/ids';
import { LIMITS, optionalText, optionalWellFormed, requireText, requireWellFormed } from '../domain/validation';
import type { ExecuteBudget } from '../budgets/execute-budget.port';
import type { Logger } from '../logger.port';
import type { IdempotentCalls } from './idempotent-calls';
import type { Orchestrator } from './orchestrator';
import type { OrchestratorRequest, StartedTurn } from './request';

export const CLIENT_KINDS = ['BROWSER', 'CLI', 'THICK_CLIENT'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

/** AgentExecuteInput as any transport delivers it (GraphQL input, REST JSON), before normalising. */
export interface ExecuteInputFields {
  readonly sessionId?: string | null;
  readonly turnId?: string | null;
  readonly agentContextId: string;
  readonly conversationContextId?: string | null;
  readonly instruction?: string | null;
  readonly mode?: string | null;
  readonly clientKind?: ClientKind | null;
  readonly workspaceId?: string | null;
  readonly repo?: string | null;
  readonly language?: string | null;
  readonly sessionName?: string | null;
  readonly activeFiles?: readonly ActiveFileFields[] | null;
  readonly toolResults?: readonly ToolResultFields[] | null;
  readonly idempotencyKey?: string | null;
  readonly retrievalPathPrefixes?: readonly string[] | null;
}

export interface ActiveFileFields {
  readonly path: string;
  readonly content?: string | null;
  readonly contentHash?: string | null;
  readonly isTouched?: boolean | null;
  readonly sizeBytes?: number | null;
}

/** rerunTurn's optional arguments besides the ids. */
export interface RerunFields {
  readonly instruction?: string | null;
  readonly activeFiles?: readonly ActiveFileFields[] | null;
  /** Absent: the old turn's scope. */
  readonly retrievalPathPrefixes?: readonly string[] | null;
}

export interface ToolResultFields {
  readonly toolCallId: string;
  readonly executionMs: number;
  readonly resultJson?: string | null;
  readonly errorMessage?: string | null;
}

/** How each calling shape (DD-001) sends its instruction, made canonical. */
interface ClientProfile {
  readonly instruction: (raw: string) => string;
}

const CLIENT_PROFILES: Readonly<Record<ClientKind, ClientProfile>> = {
  // A web form: the text as typed, surrounding whitespace dropped.
  BROWSER: { instruction: (raw) => raw.trim() },
  // A thin CLI passes terminal or piped text: CRLF line ends and trailing newlines are transport, not content.
  CLI: { instruction: (raw) => raw.replace(/\r\n?/g, '\n').trim() },
  // An IDE sends an editor selection: leading indentation can matter, so only the trailing whitespace goes.
  THICK_CLIENT: { instruction: (raw) => raw.replace(/\s+$/, '') },
};

const MODE = /^[A-Za-z][A-Za-z0-9 _-]{0,63}$/;
const MAX_TOOL_RESULTS = 128;

/**
 * DD-001 AIExecutionRequestHandler: the one entry of every execute, whatever the client kind
 * and transport. It parses and normalises the input into the canonical orchestrator request,
 * applies idempotency and the execute budgets, and turns an unreachable store into
 * SERVICE_UNAVAILABLE.
 */
export class RequestHandler {
  constructor(
    private readonly deps: {
      readonly orchestrator: Orchestrator;
      readonly idempotency: IdempotentCalls;
      readonly budget: ExecuteBudget;
      readonly logger: Logger;
    },
  ) {}

  /**
   * Waits for the turn's outcome: a final answer or a tool continuation (AGN-033).
   * `requestId` (every entry point has one) goes into the logs of whatever fails unexpectedly.
   */
  execute(caller: Caller, input: ExecuteInputFields, requestId: string | null = null): Promise<ExecuteResponse> {
    return guarded(async () => {
      const request = toOrchestratorRequest(caller, input);
      const key = parseIdempotencyKey(input.idempotencyKey);
      const fingerprint = () => fingerprintOf('execute', request);
      return this.deps.idempotency.run(caller, key, fingerprint, async () => (await this.begin(request, requestId)).outcome);
    });
  }

  /** Returns once the turn is PENDING; the pipeline continues in the background. */
  executeAsync(caller: Caller, input: ExecuteInputFields, requestId: string | null = null): Promise<ExecuteAccepted> {
    return guarded(async () => {
      const request = toOrchestratorRequest(caller, input);
      const key = parseIdempotencyKey(input.idempotencyKey);
      return this.deps.idempotency.run(caller, key, () => fingerprintOf('executeAsync', request), async () => {
        const started = await this.begin(request, requestId);
        started.outcome.catch((e: unknown) => {
          if (!isDomainError(e)) this.deps.logger.error({ err: e, requestId, ...started.accepted }, 'background turn failed unexpectedly');
        });
        return started.accepted;
      });
    });
  }

  /** DD-006. */
  rerun(caller: Caller, sessionId: string, turnId: string, fields: RerunFields, requestId: string | null = null): Promise<ExecuteResponse> {
    return guarded(async () => {
      const { instruction, activeFiles, retrievalPathPrefixes } = fields;
      const request: OrchestratorRequest = {
        kind: 'rerun',
        caller,
        sessionId: requireId('sessionId', sessionId),
        turnId: requireId('turnId', turnId),
        instruction: instruction == null ? null : requireText('instruction', instruction, LIMITS.instruction),
        activeFiles: activeFiles == null ? null : activeFiles.map(activeFileOf),
        retrievalPathPrefixes: retrievalPathPrefixes === undefined ? undefined : parseRetrievalPathPrefixes(retrievalPathPrefixes),
      };
      return (await this.begin(request, requestId)).outcome;
    });
  }

  cancel(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord> {
    return guarded(() => this.deps.orchestrator.cancel(caller, sessionId, turnId));
  }

  /**
   * The budgets are asked before anything is recorded. A new instruction or rerun is an
   * execute (charged per minute); tool results continue a turn already charged. Either holds
   * an in-flight slot until its provider round ends, however it ends.
   */
  private async begin(request: OrchestratorRequest, requestId: string | null): Promise<StartedTurn> {
    const hold = await this.deps.budget.admit(request.caller, { newExecute: request.kind !== 'tool_results' });
    let started: StartedTurn;
    try {
      started = await this.deps.orchestrator.start(request, requestId);
    } catch (e) {
      hold.release();
      throw e;
    }
    started.outcome.then(hold.release, hold.release);
    return started;
  }
}

/** Parses and normalises once, at the edge; the result no longer knows the client kind. */
export function toOrchestratorRequest(caller: Caller, input: ExecuteInputFields): OrchestratorRequest {
  const profile = CLIENT_PROFILES[input.clientKind ?? 'BROWSER'];
  if (!profile) throw badInput('clientKind must be BROWSER, CLI or THICK_CLIENT', { field: 'clientKind' });
  const sessionId = optionalId('sessionId', input.sessionId);
  const turnId = optionalId('turnId', input.turnId);
  if (input.toolResults !== null && input.toolResults !== undefined) {
    if (!sessionId || !turnId) {
      throw badInput('toolResults need the sessionId and turnId of the turn that asked for them', { field: 'turnId' });
    }
    if (input.instruction) throw badInput('send either an instruction or toolResults, not both', { field: 'instruction' });
    if (input.toolResults.length > MAX_TOOL_RESULTS) throw badInput(`at most ${MAX_TOOL_RESULTS} tool results`, { field: 'toolResults' });
    return { kind: 'tool_results', caller, sessionId, turnId, toolResults: input.toolResults.map(toolResultOf) };
  }
  if (turnId && !sessionId) throw badInput('a turnId needs the sessionId of its session', { field: 'sessionId' });
  const instruction = profile.instruction(input.instruction ?? '');
  const mode = (input.mode ?? 'ask').trim();
  if (!MODE.test(mode)) throw badInput('mode must be a short word such as "ask" or "edit"', { field: 'mode' });
  return {
    kind: 'instruction',
    caller,
    sessionId,
    agentContextId: requireId('agentContextId', input.agentContextId),
    conversationContextId: optionalId('conversationContextId', input.conversationContextId),
    instruction: requireText('instruction', instruction, LIMITS.instruction),
    mode,
    workspaceId: optionalText('workspaceId', input.workspaceId, LIMITS.shortText),
    repo: optionalText('repo', input.repo, LIMITS.shortText),
    language: optionalText('language', input.language, 64),
    sessionName: optionalText('sessionName', input.sessionName, LIMITS.name),
    activeFiles: (input.activeFiles ?? []).map(activeFileOf),
    retrievalPathPrefixes: parseRetrievalPathPrefixes(input.retrievalPathPrefixes),
    followsTurnId: turnId,
  };
}

const activeFileOf = (f: ActiveFileFields): ActiveFileSubmission => ({
  path: normalisePath(requireWellFormed('activeFiles.path', f.path)),
  content: optionalWellFormed('activeFiles.content', f.content),
  contentHash: optionalWellFormed('activeFiles.contentHash', f.contentHash),
  isTouched: f.isTouched ?? true,
  sizeBytes: f.sizeBytes ?? null,
});

const toolResultOf = (r: ToolResultFields): ToolResultSubmission => ({
  toolCallId: requireId('toolResults.toolCallId', r.toolCallId),
  executionMs: r.executionMs,
  resultJson: optionalWellFormed('toolResults.resultJson', r.resultJson),
  errorMessage: optionalWellFormed('toolResults.errorMessage', r.errorMessage),
});

/** The same input, as idempotency compares it: the canonical request without the caller (the key is per caller). */
const fingerprintOf = (operation: string, request: OrchestratorRequest): string =>
  inputFingerprint(operation, { ...request, caller: undefined });

/** A store that could not be reached before the turn existed: the caller may simply send the request again. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof UnavailableError) {
      throw new DomainError('SERVICE_UNAVAILABLE', `the ${e.dependency} is unavailable; no turn was recorded, try again later`);
    }
    throw e;
  }
}

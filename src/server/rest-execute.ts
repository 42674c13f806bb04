import express, { type Router } from 'express';
import { badInput } from '../domain/errors';
import type { ExecuteResponse } from '../domain/execute-response';
import { parseExecutionMs } from '../domain/tool-results';
import {
  CLIENT_KINDS,
  type ActiveFileFields,
  type ClientKind,
  type ExecuteInputFields,
  type RequestHandler,
  type ToolResultFields,
} from '../orchestrator/request-handler';
import type { TokenVerifier } from '../auth/token-verifier.port';
import { authenticate } from './auth';
import { requestIdOf, sendJson } from './http-errors';

export interface RestExecuteDeps {
  readonly handler: RequestHandler;
  readonly tokens: TokenVerifier;
}

/**
 * DD-004 `POST /api/ai/agent/execute` for thin clients: the same bearer auth and request
 * handler as GraphQL; the body is AgentExecuteInput as JSON (read by the pipeline's one body
 * parser); the answer is the AGN-033 object as JSON (`kind: "final" | "client_tool_continuation"`,
 * forbidden buckets absent); errors are `{ errorCode, errorMessage }` with the HTTP status of
 * the code (the pipeline's error presenter, http-errors.ts).
 */
export function restExecuteRouter(deps: RestExecuteDeps): Router {
  const router = express.Router();
  router.post('/api/ai/agent/execute', async (req, res) => {
    const { caller } = await authenticate(req.headers.authorization, deps.tokens);
    const idempotencyKey = req.headers['idempotency-key'];
    const input = parseExecuteBody(req.body, typeof idempotencyKey === 'string' ? idempotencyKey : null);
    const answer = await deps.handler.execute(caller, input, requestIdOf(res));
    sendJson(req, res, 200, toRestAnswer(answer));
  });
  return router;
}

/** AGN-033 as JSON: only the buckets the kind allows, and only when present. */
export function toRestAnswer(answer: ExecuteResponse): Record<string, unknown> {
  const meta = { kind: answer.kind, sessionId: answer.sessionId, turnId: answer.turnId, modeDisplayName: answer.modeDisplayName };
  if (answer.kind === 'client_tool_continuation') {
    return {
      ...meta,
      toolCalls: answer.toolCalls.map((c) => ({ toolCallId: c.toolCallId, name: c.name, argumentsJson: c.argumentsJson })),
      ...(answer.toolContinuationMessage !== undefined ? { toolContinuationMessage: answer.toolContinuationMessage } : {}),
    };
  }
  return {
    ...meta,
    primaryOutputText: answer.primaryOutputText,
    ...(answer.files ? { files: answer.files } : {}),
    ...(answer.toolResults
      ? {
          toolResults: answer.toolResults.map((r) => ({
            toolCallId: r.toolCallId,
            executionMs: r.executionMs,
            ...(r.outcome.kind === 'result' ? { resultJson: r.outcome.resultJson } : { errorMessage: r.outcome.errorMessage }),
          })),
        }
      : {}),
    ...(answer.userWarnings ? { userWarnings: answer.userWarnings } : {}),
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
}

// ------------------------------------------------------------------ parsing untrusted JSON, once

const INPUT_FIELDS = new Set([
  'sessionId', 'turnId', 'agentContextId', 'conversationContextId', 'instruction', 'mode', 'clientKind', 'workspaceId',
  'repo', 'language', 'sessionName', 'activeFiles', 'toolResults', 'idempotencyKey', 'retrievalPathPrefixes',
]);

/** The JSON body as AgentExecuteInput, with GraphQL's type rules and defaults; anything else is BAD_USER_INPUT. */
export function parseExecuteBody(body: unknown, idempotencyHeader: string | null): ExecuteInputFields {
  const o = object(body, 'the request body');
  for (const key of Object.keys(o)) if (!INPUT_FIELDS.has(key)) throw badInput(`unknown field "${key.slice(0, 60)}"`, { field: key.slice(0, 60) });
  const clientKind = optionalString(o, 'clientKind');
  if (clientKind !== null && !(CLIENT_KINDS as readonly string[]).includes(clientKind)) {
    throw badInput(`clientKind must be one of ${CLIENT_KINDS.join(', ')}`, { field: 'clientKind' });
  }
  return {
    sessionId: optionalString(o, 'sessionId'),
    turnId: optionalString(o, 'turnId'),
    agentContextId: requiredString(o, 'agentContextId'),
    conversationContextId: optionalString(o, 'conversationContextId'),
    instruction: optionalString(o, 'instruction'),
    mode: optionalString(o, 'mode') ?? 'ask',
    clientKind: (clientKind as ClientKind | null) ?? 'BROWSER',
    workspaceId: optionalString(o, 'workspaceId'),
    repo: optionalString(o, 'repo'),
    language: optionalString(o, 'language'),
    sessionName: optionalString(o, 'sessionName'),
    activeFiles: optionalArray(o, 'activeFiles', activeFileOf),
    toolResults: optionalArray(o, 'toolResults', toolResultOf),
    idempotencyKey: optionalString(o, 'idempotencyKey') ?? idempotencyHeader,
    retrievalPathPrefixes: optionalArray(o, 'retrievalPathPrefixes', (v, at) => stringItem(v, at)),
  };
}

function activeFileOf(value: unknown, at: string): ActiveFileFields {
  const o = object(value, at);
  return {
    path: requiredString(o, 'path', at),
    content: optionalString(o, 'content', at),
    contentHash: optionalString(o, 'contentHash', at),
    isTouched: optionalBoolean(o, 'isTouched', at) ?? true,
    sizeBytes: optionalInt(o, 'sizeBytes', at),
  };
}

function stringItem(value: unknown, at: string): string {
  if (typeof value !== 'string') throw badInput(`${at} must be a string`, { field: at.replace(/\[\d+\]$/, '') });
  return value;
}

/** GraphQL's Int: a whole number within 32 bits. */
function optionalInt(o: Record<string, unknown>, key: string, at: string): number | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2 ** 31 - 1) {
    throw badInput(`${at}.${key} must be a whole number`, { field: key });
  }
  return value;
}

function toolResultOf(value: unknown, at: string): ToolResultFields {
  const o = object(value, at);
  return {
    toolCallId: requiredString(o, 'toolCallId', at),
    executionMs: parseExecutionMs(o.executionMs, `${at}.executionMs`),
    resultJson: optionalString(o, 'resultJson', at),
    errorMessage: optionalString(o, 'errorMessage', at),
  };
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badInput(`${at} must be a JSON object`);
  return value as Record<string, unknown>;
}

function requiredString(o: Record<string, unknown>, key: string, at = ''): string {
  const value = o[key];
  if (typeof value !== 'string') throw badInput(`${at ? `${at}.` : ''}${key} must be a string`, { field: key });
  return value;
}

function optionalString(o: Record<string, unknown>, key: string, at = ''): string | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badInput(`${at ? `${at}.` : ''}${key} must be a string or null`, { field: key });
  return value;
}

function optionalBoolean(o: Record<string, unknown>, key: string, at: string): boolean | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') throw badInput(`${at}.${key} must be a boolean`, { field: key });
  return value;
}

function optionalArray<T>(o: Record<string, unknown>, key: string, item: (value: unknown, at: string) => T): T[] | null {
  const value = o[key];
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw badInput(`${key} must be an array`, { field: key });
  return value.map((v, i) => item(v, `${key}[${i}]`));
}


import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { INTERNAL_MESSAGE, isDomainError, type ErrorCode } from '../domain/errors';
import type { Logger } from '../logger';
import { BodyError, type BodyRefusal } from './json-body';

/**
 * The HTTP status of every error code: what REST answers with, and GraphQL over HTTP for a
 * refused token. Adding a code to domain/errors.ts without a row here does not compile.
 */
export const HTTP_STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
  CONFLICT: 409,
  SESSION_BUSY: 409,
  TURN_NOT_LATEST: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  TOOL_RESULTS_MISMATCH: 400,
  LLM_FAILED: 502,
  LLM_TIMEOUT: 504,
  CANCELLED: 409,
  SERVICE_UNAVAILABLE: 503,
  EVENTS_PRUNED: 410,
  TOO_MANY_SUBSCRIPTIONS: 429,
  RESPONSE_TOO_LARGE: 400,
  RATE_LIMITED: 429,
  TOO_MANY_TOOL_ROUNDS: 422,
};

const BODY_STATUS: Readonly<Record<BodyRefusal, number>> = {
  'entity.too.large': 413,
  'entity.parse.failed': 400,
  'encoding.unsupported': 415,
  'charset.unsupported': 415,
  'request.aborted': 400,
};

/** Errors that say the client went away (a reset, a stream cut short), not that the gateway failed. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

/** True when the error is the client's leaving: its socket is gone before the answer ended. */
function clientWentAway(error: unknown, req: Request, res: Response): boolean {
  if (error instanceof BodyError) return error.type === 'request.aborted';
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && CLIENT_GONE.has(code)) || (!res.writableEnded && req.socket.destroyed);
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every HTTP request an id (the caller's `x-request-id` when it is a plain token, else
 * a new one), answered in `x-request-id` and logged with any error the request meets.
 */
export const assignRequestId: RequestHandler = (req, res, next) => {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = requestId;
  res.setHeader('x-request-id', requestId);
  next();
};

export const requestIdOf = (res: Pick<Response, 'locals'>): string => String(res.locals.requestId);

/** Error details REST clients receive beside errorCode (RATE_LIMITED's also becomes Retry-After). */
const REST_DETAILS = new Set(['sessionId', 'turnId', 'field', 'retryAfterSeconds']);

interface RestError {
  readonly status: number;
  readonly body: { readonly errorCode: string; readonly errorMessage: string } & Readonly<Record<string, unknown>>;
  /** False for an error nobody meant to show: it is masked, and logged with the request id. */
  readonly expected: boolean;
}

/** The REST presenter: `{ errorCode, errorMessage }` and the status of the code; anything unexpected is masked. */
function presentRestError(error: unknown): RestError {
  // The pipeline's one body parser (json-body.ts) refuses a body it will not read with these.
  if (error instanceof BodyError) return shown(BODY_STATUS[error.type], 'BAD_USER_INPUT', error.message);
  if (isDomainError(error)) {
    const extra = Object.fromEntries(Object.entries(error.details).filter(([k]) => REST_DETAILS.has(k)));
    return { status: HTTP_STATUS_OF[error.code], body: { errorCode: error.code, errorMessage: error.message, ...extra }, expected: true };
  }
  return { status: 500, body: { errorCode: 'INTERNAL_SERVER_ERROR', errorMessage: INTERNAL_MESSAGE }, expected: false };
}

const shown = (status: number, code: ErrorCode, message: string): RestError => ({
  status,
  body: { errorCode: code, errorMessage: message },
  expected: true,
});

/** Paths whose errors are GraphQL's `{ errors }` (GraphQL over HTTP, the event streams); every other route answers REST's. */
const GRAPHQL_PATH = /^\/graphql(\/|$)/i;

/**
 * The one error presenter of the HTTP pipeline (the last express middleware): whatever a route
 * or the body parser threw is answered with the REST presenter's status, as REST's
 * `{ errorCode, errorMessage }` or, under /graphql, as GraphQL's `{ errors }` with the code in
 * `extensions` (like Apollo's own answers). Unexpected errors are masked and logged with the
 * request id; an answer that had already begun is cut off.
 */
export function presentHttpError(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const where = `${req.method} ${req.path}`;
    // Not the gateway's failure: no error, no stack (issue 36).
    if (clientWentAway(error, req, res)) {
      logger.info({ requestId: requestIdOf(res), where, reason: (error as Error).message }, 'the client went away before its answer was sent');
      res.destroy();
      return;
    }
    if (res.headersSent) {
      logger.error({ err: error, requestId: requestIdOf(res), where }, 'a request failed after its answer began');
      res.destroy();
      return;
    }
    const presented = presentRestError(error);
    if (!presented.expected) logger.error({ err: error, requestId: requestIdOf(res), where }, 'unexpected error while answering a request');
    if (typeof presented.body.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(presented.body.retryAfterSeconds));
    const body = GRAPHQL_PATH.test(req.path)
      ? { errors: [{ message: presented.body.errorMessage, extensions: { code: presented.body.errorCode } }] }
      : presented.body;
    sendJson(req, res, presented.status, body);
  };
}

/**
 * A JSON answer. A request body that has all arrived is dropped and the connection stays
 * usable; one still arriving (refused before it was read: no token, over the limit) is not
 * read at all: the connection closes after the answer.
 */
export function sendJson(req: Request, res: Response, status: number, body: unknown): void {
  if (req.complete) req.resume();
  else res.setHeader('connection', 'close');
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

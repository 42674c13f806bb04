import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler } from 'express';
import { INTERNAL_MESSAGE, isDomainError, type ErrorCode } from '../domain/errors';
import type { Logger } from '../logger';
import { expressFailure, type PlainHandler, type PlainRequest, type PlainResponse, type RequestFailed } from './plain-lane';

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

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives every HTTP request an id (the caller's `x-request-id` when it is a plain token, else
 * a new one), answered in `x-request-id` and logged with any error the request meets.
 */
export const assignRequestId: PlainHandler = (req, res, next) => {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = requestId;
  res.setHeader('x-request-id', requestId);
  next();
};

export const requestIdOf = (res: Pick<PlainResponse, 'locals'>): string => String(res.locals.requestId);

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
  // Express rejects a body it cannot read with these `type`s (body-parser; jsonBody keeps them).
  const parserType = (error as { type?: unknown } | null)?.type;
  if (parserType === 'entity.parse.failed') return shown(400, 'BAD_USER_INPUT', 'the request body is not valid JSON');
  if (parserType === 'entity.too.large') return shown(413, 'BAD_USER_INPUT', 'the request body is too large');
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

/** Answers `error` with the presenter's status, in the body `shape` gives; an unexpected one is logged with the request id. */
function answerFailure(logger: Logger, where: string, shape: (presented: RestError) => unknown): RequestFailed {
  return (error, req, res) => {
    if (res.headersSent) {
      logger.error({ err: error, requestId: requestIdOf(res) }, `${where} failed after its answer began`);
      res.destroy();
      return;
    }
    const presented = presentRestError(error);
    if (!presented.expected) logger.error({ err: error, requestId: requestIdOf(res) }, `unexpected error in ${where}`);
    if (typeof presented.body.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(presented.body.retryAfterSeconds));
    sendJson(req, res, presented.status, shape(presented));
  };
}

/** A REST route's failure: `{ errorCode, errorMessage }` and the status of the code. */
export const restRequestFailed = (logger: Logger, where: string): RequestFailed => answerFailure(logger, where, (p) => p.body);

/** The error middleware of the REST routes express serves. */
export const restErrorHandler = (logger: Logger, where: string): ErrorRequestHandler => expressFailure(restRequestFailed(logger, where));

/** A JSON answer without express; what is left of a refused request body is read and dropped, so the connection stays usable. */
export function sendJson(req: PlainRequest, res: PlainResponse, status: number, body: unknown): void {
  req.resume();
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

/**
 * What POST /graphql answers when the request never reaches Apollo (a body it cannot read, or a
 * fault before it): the REST presenter's status, code and message as GraphQL's `{ errors }`
 * with the code in `extensions`, like Apollo's own answers.
 */
export const graphqlRequestFailed = (logger: Logger): RequestFailed =>
  answerFailure(logger, 'POST /graphql', (p) => ({ errors: [{ message: p.body.errorMessage, extensions: { code: p.body.errorCode } }] }));

/**
 * Every error the gateway reports on purpose is a DomainError carrying one of these codes,
 * whatever raised it (a rule, a store, the model provider, retrieval). Each transport has one
 * presenter for them (graphql/error-mapping.ts, server/rest-errors.ts); anything else is an
 * internal error and is masked before it reaches a client.
 */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'CONFLICT',
  'SESSION_BUSY',
  /** A follow-on instruction names a turn that is not the session's latest finished one (AGN-033 SessionId + TurnId). */
  'TURN_NOT_LATEST',
  'IDEMPOTENCY_KEY_REUSED',
  'TOOL_RESULTS_MISMATCH',
  'LLM_FAILED',
  'LLM_TIMEOUT',
  'CANCELLED',
  'SERVICE_UNAVAILABLE',
  /** Resuming a subscription from an event that was already pruned (EVENT_RETENTION_HOURS). */
  'EVENTS_PRUNED',
  /** A WebSocket already runs WS_MAX_SUBSCRIPTIONS_PER_CONNECTION operations; the socket stays open. */
  'TOO_MANY_SUBSCRIPTIONS',
  /** The response would hold more list items than GRAPHQL_MAX_RESPONSE_ITEMS. */
  'RESPONSE_TOO_LARGE',
  /** A per-user or per-org budget (executes per minute, turns in flight) is spent; details carry retryAfterSeconds. */
  'RATE_LIMITED',
  /** A turn asked the client for tools more than MAX_CLIENT_TOOL_ROUNDS times: it failed; details carry the limit. */
  'TOO_MANY_TOOL_ROUNDS',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Extra, client-safe facts about an error (e.g. the turn a failed execute created). */
export type ErrorDetails = Readonly<Record<string, string | number | boolean | null>>;

/**
 * The one error shape. Its message and details are safe to show any client; an error that
 * needs a finer reason internally is a subclass with a typed field (LlmError's `kind`,
 * RetrievalError's `kind`, UnavailableError's `dependency`), and transports see the code.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DomainError';
  }
}

/** What the gateway depends on and may find away; the adapters of each port say so with an UnavailableError. */
export type Dependency = 'session store' | 'blob store';

/**
 * A dependency cannot be reached right now (refused, timed out, connection lost): every
 * client sees SERVICE_UNAVAILABLE, never an internal error. `reason` says what happened, for
 * logs only (it may name hosts or buckets).
 */
export class UnavailableError extends DomainError {
  constructor(
    readonly dependency: Dependency,
    readonly reason: string,
    options?: { readonly cause?: unknown },
  ) {
    super('SERVICE_UNAVAILABLE', `the ${dependency} is unavailable; try again later`, {}, options);
    this.name = 'UnavailableError';
  }
}

export const isUnavailable = (e: unknown, dependency: Dependency): e is UnavailableError =>
  e instanceof UnavailableError && e.dependency === dependency;

/** What a client sees of an error that was not meant for it (it is logged with the request id instead). */
export const INTERNAL_MESSAGE = 'Internal server error';

export const notFound = (what: string): DomainError => new DomainError('NOT_FOUND', `${what} not found`);
export const badInput = (message: string, details: ErrorDetails = {}): DomainError =>
  new DomainError('BAD_USER_INPUT', message, details);
export const forbidden = (message: string): DomainError => new DomainError('FORBIDDEN', message);
export const conflict = (message: string, details: ErrorDetails = {}): DomainError =>
  new DomainError('CONFLICT', message, details);

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;

/**
 * Every error the gateway reports on purpose carries one of these codes. The GraphQL and
 * REST layers map them exhaustively (see graphql/error-mapping.ts); anything else is an
 * internal error and is masked before it reaches a client.
 */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'CONFLICT',
  'SESSION_BUSY',
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
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Extra, client-safe facts about an error (e.g. the turn a failed execute created). */
export type ErrorDetails = Readonly<Record<string, string | number | boolean | null>>;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string): DomainError => new DomainError('NOT_FOUND', `${what} not found`);
export const badInput = (message: string, details: ErrorDetails = {}): DomainError =>
  new DomainError('BAD_USER_INPUT', message, details);
export const forbidden = (message: string): DomainError => new DomainError('FORBIDDEN', message);
export const conflict = (message: string, details: ErrorDetails = {}): DomainError =>
  new DomainError('CONFLICT', message, details);

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;

import type { GraphQLFormattedError } from 'graphql';

/**
 * Codes the client itself reports, next to the gateway's own (`extensions.code`:
 * UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, BAD_USER_INPUT, EVENTS_PRUNED, ...).
 */
export type ClientErrorCode =
  /** The request never got an answer (server down, connection refused, aborted). */
  | 'NETWORK_ERROR'
  /** The answer was not a GraphQL response (e.g. a proxy's error page). */
  | 'BAD_RESPONSE'
  /** The subscription's connection closed and could not be resumed. */
  | 'CONNECTION_CLOSED';

/** Every failure the client reports: a code to branch on, and the server's errors when there were some. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';

  constructor(
    /** `extensions.code` of the first GraphQL error, or a ClientErrorCode. */
    readonly code: string,
    message: string,
    /** HTTP status, when the error came with one. */
    readonly status: number | null = null,
    readonly errors: readonly GraphQLFormattedError[] = [],
  ) {
    super(message);
  }

  /** The token is missing, malformed, expired or wrongly signed: sign in again. */
  get isUnauthenticated(): boolean {
    return this.code === 'UNAUTHENTICATED';
  }
}

export function fromGraphQLErrors(errors: readonly GraphQLFormattedError[], status: number | null = null): GatewayError {
  const first = errors[0];
  const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : 'INTERNAL_SERVER_ERROR';
  return new GatewayError(code, first?.message ?? 'the gateway reported an error', status, errors);
}

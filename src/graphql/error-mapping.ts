import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError, ERROR_CODES, INTERNAL_MESSAGE } from '../domain/errors';
import { RefusedIdError } from './scalars/id.scalar';

/** Codes GraphQL servers themselves produce for bad requests; safe to pass through. */
const PROTOCOL_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'INTROSPECTION_DISABLED',
  'MAX_RECURSIVE_SELECTIONS_EXCEEDED',
  'UNAUTHENTICATED',
]);

/**
 * A domain error as a GraphQL error (used where an error must be thrown, e.g. auth);
 * `extensions` adds transport facts such as the HTTP status.
 */
export function toGraphQLError(error: DomainError, extensions: Readonly<Record<string, unknown>> = {}): GraphQLError {
  return new GraphQLError(error.message, { extensions: { code: error.code, ...error.details, ...extensions } });
}

/** True when an error is one we meant to show; everything else is masked and logged. */
export function isExpectedError(error: unknown): boolean {
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) return true;
  if (!(original instanceof GraphQLError)) return false;
  // Parse, validation and variable errors: made by GraphQL itself, about the request.
  const cause = original.originalError;
  if (cause && !(cause instanceof GraphQLError)) return false;
  const code = original.extensions.code;
  if (typeof code !== 'string') return original.path === undefined;
  // Transports code their own refusals with domain codes (e.g. TOO_MANY_SUBSCRIPTIONS on a WebSocket).
  return PROTOCOL_CODES.has(code) || (ERROR_CODES as readonly string[]).includes(code);
}

/**
 * graphql-js's hints — `Did you mean "x"?`, `Did you mean the enum value "X"?`, `Did you mean
 * to use an inline fragment on "T"?` — name schema members; production leaves them out.
 */
export const withoutSuggestions = (message: string): string => message.replace(/\s*Did you mean [^?]*\?/g, '').trim();

/**
 * An id the ID scalar refused is bad user input wherever graphql-js met it: Apollo reports
 * one written into the document as a validation failure, with the scalar's error as the cause.
 */
function refusedInputCode(error: unknown): 'BAD_USER_INPUT' | null {
  return error instanceof GraphQLError && error.originalError instanceof RefusedIdError ? 'BAD_USER_INPUT' : null;
}

/**
 * The GraphQL presenter, for HTTP and WebSocket alike (protection.ts hands it to both):
 * domain errors get their code, internals never leave the process.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) {
    return {
      message: original.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: original.code, ...original.details },
    };
  }
  if (isExpectedError(error)) {
    const { stacktrace: _drop, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions: { ...extensions, code: refusedInputCode(original) ?? extensions.code ?? 'GRAPHQL_VALIDATION_FAILED' } };
  }
  return {
    message: INTERNAL_MESSAGE,
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}

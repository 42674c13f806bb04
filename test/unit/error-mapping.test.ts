import { GraphQLError } from 'graphql';
import { DomainError, ERROR_CODES } from '../../src/domain/errors';
import { formatError, HTTP_STATUS_OF, INTERNAL_MESSAGE } from '../../src/graphql/error-mapping';

describe('error mapping', () => {
  it('has an HTTP status for every domain code', () => {
    expect(Object.keys(HTTP_STATUS_OF).sort()).toEqual([...ERROR_CODES].sort());
  });

  it('shows domain errors with their code and details', () => {
    const e = new GraphQLError('wrapped', { originalError: new DomainError('LLM_FAILED', 'the provider failed', { sessionId: 's', turnId: 't' }), path: ['execute'] });
    expect(formatError({ message: 'wrapped', path: ['execute'] }, e)).toEqual({
      message: 'the provider failed',
      path: ['execute'],
      extensions: { code: 'LLM_FAILED', sessionId: 's', turnId: 't' },
    });
  });

  it('masks anything unexpected, stack and message alike', () => {
    const e = new GraphQLError('ER_NO_SUCH_TABLE: agent_sessions', { originalError: new Error('ER_NO_SUCH_TABLE: agent_sessions'), path: ['x'] });
    const formatted = formatError({ message: e.message, path: ['x'], extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at db'] } }, e);
    expect(formatted).toEqual({ message: INTERNAL_MESSAGE, path: ['x'], extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it('passes request errors (validation, variables) through without stack traces', () => {
    const e = new GraphQLError('Cannot query field "nope" on type "Query".');
    const formatted = formatError({ message: e.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED', stacktrace: ['x'] } }, e);
    expect(formatted).toEqual({ message: e.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });
});

import { GraphQLError } from 'graphql';
import { DomainError, ERROR_CODES, INTERNAL_MESSAGE } from '../../src/domain/errors';
import { formatError, withoutSuggestions } from '../../src/graphql/error-mapping';
import { HTTP_STATUS_OF } from '../../src/server/http-errors';

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

  it('passes a transport refusal coded with a domain code, and masks an error with a code of nobody\'s', () => {
    const refusal = new GraphQLError('At most 2 operations', { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 2 } });
    expect(formatError(refusal.toJSON(), refusal)).toEqual({ message: 'At most 2 operations', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 2 } });
    const odd = new GraphQLError('select * from secrets', { extensions: { code: 'ER_PARSE' } });
    expect(formatError(odd.toJSON(), odd)).toEqual({ message: INTERNAL_MESSAGE, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });

  it.each([
    ['Cannot query field "agentSesions" on type "Query". Did you mean "agentSessions" or "agentSession"?', 'Cannot query field "agentSesions" on type "Query".'],
    ['Value "PENDIN" does not exist in "AgentSessionTurnStatus" enum. Did you mean the enum value "PENDING"?', 'Value "PENDIN" does not exist in "AgentSessionTurnStatus" enum.'],
    [
      'Cannot query field "primaryOutputText" on type "AgentExecuteResponse". Did you mean to use an inline fragment on "AgentFinalResponse" or "AgentToolContinuation"?',
      'Cannot query field "primaryOutputText" on type "AgentExecuteResponse".',
    ],
    ['Variable "$s" got invalid value "PENDIN"; Value "PENDIN" does not exist in "AgentSessionTurnStatus" enum. Did you mean the enum value "PENDING"?', 'Variable "$s" got invalid value "PENDIN"; Value "PENDIN" does not exist in "AgentSessionTurnStatus" enum.'],
  ])('removes the suggestion from %p', (message, masked) => {
    expect(withoutSuggestions(message)).toBe(masked);
  });
});

import { isObjectType, isUnionType } from 'graphql';
import { gatewaySchema } from '../../src/graphql/schema';

/** AGN-033 3.4 in the schema itself: a bucket forbidden for a kind does not exist on its type. */
describe('AGN-033 response types', () => {
  const schema = gatewaySchema();
  const fields = (name: string) => {
    const type = schema.getType(name);
    if (!isObjectType(type)) throw new Error(`${name} is not an object type`);
    return Object.keys(type.getFields()).sort();
  };

  it('the final response carries the answer and may carry files, tool results, warnings and usage, never tool calls', () => {
    expect(fields('AgentFinalResponse')).toEqual(['files', 'kind', 'modeDisplayName', 'primaryOutputText', 'sessionId', 'toolResults', 'turnId', 'usage', 'userWarnings']);
    const type = schema.getType('AgentFinalResponse');
    expect(isObjectType(type) && String(type.getFields().primaryOutputText?.type)).toBe('String!');
  });

  it('the continuation carries tool calls and an optional message, never the answer, files, tool results, warnings or usage', () => {
    expect(fields('AgentToolContinuation')).toEqual(['kind', 'modeDisplayName', 'sessionId', 'toolCalls', 'toolContinuationMessage', 'turnId']);
  });

  it('execute and rerunTurn answer exactly one of the two kinds', () => {
    const union = schema.getType('AgentExecuteResponse');
    expect(isUnionType(union) && union.getTypes().map((t) => t.name).sort()).toEqual(['AgentFinalResponse', 'AgentToolContinuation']);
    const mutation = schema.getMutationType()!.getFields();
    expect(String(mutation.execute?.type)).toBe('AgentExecuteResponse!');
    expect(String(mutation.rerunTurn?.type)).toBe('AgentExecuteResponse!');
  });
});

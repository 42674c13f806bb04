import { parse, validate } from 'graphql';
import { DEFAULT_MAX_COST } from '../../src/config';
import { operationCost } from '../../src/graphql/cost';
import { gatewaySchema } from '../../src/graphql/schema';
import { MAX_PAGE_SIZE } from '../../src/domain/pagination';
import { clientOperations, FLOOD_WITH_DEFAULT, FLOOD_WITH_LITERAL, FLOOD_WITH_VARIABLE } from '../support/client-queries';

const schema = gatewaySchema();

describe('GRAPHQL_MAX_COST calibration', () => {
  const operations = clientOperations(schema, MAX_PAGE_SIZE);

  it('finds the dashboard queries, the test operations and the README queries', () => {
    const names = operations.map((o) => o.name);
    expect(names).toEqual(expect.arrayContaining(['dashboard SummaryPage', 'dashboard SessionTurns', 'test/operations SessionList', 'README query 1 (anonymous)']));
  });

  it.each(operations.map((o) => [o.name, o] as const))('lets %s in at the largest page size', (_name, operation) => {
    // A fragment the estimate cannot find would go uncounted.
    expect(validate(schema, operation.document)).toEqual([]);
    const cost = operationCost(schema, operation.document, operation.operationName, operation.variables);
    expect(cost).not.toBeNull();
    expect(cost).toBeLessThanOrEqual(DEFAULT_MAX_COST);
  });

  it.each([
    ['page sizes from a variable', FLOOD_WITH_VARIABLE, { id: 's', n: 100 }],
    ['page sizes left to the schema default', FLOOD_WITH_DEFAULT, { id: 's' }],
    ['page sizes as literals', FLOOD_WITH_LITERAL, { id: 's' }],
  ])('keeps the flood of issue 8 out, with %s', (_how, query, variables) => {
    expect(Buffer.byteLength(query)).toBeLessThan(3_000);
    expect(operationCost(schema, parse(query), undefined, variables)).toBeGreaterThan(5 * DEFAULT_MAX_COST);
  });
});

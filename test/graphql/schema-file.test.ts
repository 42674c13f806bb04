import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { printGatewaySchema } from '../../src/graphql/schema';

describe('schema/schema.graphql', () => {
  it('is what the code-first schema emits (run `npm run schema:emit` after changing types)', () => {
    const committed = readFileSync(resolve(__dirname, '../../schema/schema.graphql'), 'utf8');
    expect(committed).toBe(printGatewaySchema());
  });
});

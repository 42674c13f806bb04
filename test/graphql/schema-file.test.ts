import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { ID, RefusedIdError } from '../../src/graphql/scalars/id.scalar';
import { gatewaySchema, printGatewaySchema } from '../../src/graphql/schema';

const root = resolve(__dirname, '../..');

describe('generated artefacts', () => {
  it('schema/schema.graphql is what the code-first schema emits (run `npm run schema:emit`)', () => {
    expect(readFileSync(resolve(root, 'schema/schema.graphql'), 'utf8')).toBe(printGatewaySchema());
  });

  it('parses every ID with the gateway\'s id rule: the schema\'s one ID scalar is scalars/id.scalar.ts\'s', () => {
    const id = gatewaySchema().getType('ID');
    expect(id).toBe(ID);
    expect(() => ID.parseValue('corp\ud800')).toThrow(RefusedIdError);
    expect(() => ID.parseValue('x'.repeat(65))).toThrow('an ID must be at most 64 characters');
    expect(ID.parseValue(42)).toBe('42');
    expect(ID.parseValue('corp\uFFFD')).toBe('corp\uFFFD');
  });

  it('test/generated and packages/client/src/generated match their operations and the schema (run `npm run codegen`)', async () => {
    // The codegen CLI is ESM inside; jest cannot load it, so run it as `npm run codegen` would.
    const bin = resolve(root, 'node_modules/.bin/graphql-codegen');
    await expect(promisify(execFile)(process.execPath, [bin, '--config', 'codegen.yml', '--check'], { cwd: root })).resolves.toBeDefined();
  }, 60_000);
});

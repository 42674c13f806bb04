import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { printGatewaySchema } from '../../src/graphql/schema';

const root = resolve(__dirname, '../..');

describe('generated artefacts', () => {
  it('schema/schema.graphql is what the code-first schema emits (run `npm run schema:emit`)', () => {
    expect(readFileSync(resolve(root, 'schema/schema.graphql'), 'utf8')).toBe(printGatewaySchema());
  });

  it('test/generated and src/client/generated match their operations and the schema (run `npm run codegen`)', async () => {
    // The codegen CLI is ESM inside; jest cannot load it, so run it as `npm run codegen` would.
    const bin = resolve(root, 'node_modules/.bin/graphql-codegen');
    await expect(promisify(execFile)(process.execPath, [bin, '--config', 'codegen.yml', '--check'], { cwd: root })).resolves.toBeDefined();
  }, 60_000);
});

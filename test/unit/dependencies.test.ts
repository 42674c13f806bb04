import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Issue 37 item 7: every dependency in package.json is used. A package counts as used when a
 * tracked source file imports or requires it; the few that are never imported (compilers, test
 * runners, code generators, type packages) must be named where they are used instead.
 */
const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const dependencies = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });

const sources = execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.mjs', '*.js', '*.cjs'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((path) => path !== '' && !path.includes('/generated/'));
const imported = new Set<string>();
for (const path of sources) {
  for (const m of read(path).matchAll(/(?:from\s+|require\(\s*|import\(\s*|^import\s+)['"]((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^'"]*)?['"]/gm)) imported.add(m[1]!);
}

/** Where a package that nothing imports is used: a file and the text that names it there. */
const TOOLS: Readonly<Record<string, readonly [file: string, named: string]>> = {
  typescript: ['test/run.mjs', "require.resolve('typescript/bin/tsc')"],
  'ts-jest': ['jest.config.js', "'ts-jest'"],
  eslint: ['test/run.mjs', "'eslint', 'bin', 'eslint.js'"],
  '@graphql-codegen/cli': ['package.json', '"codegen": "graphql-codegen'],
  '@graphql-codegen/typescript': ['codegen.yml', '- typescript\n'],
  '@graphql-codegen/typescript-operations': ['codegen.yml', '- typescript-operations'],
  '@graphql-codegen/typed-document-node': ['codegen.yml', '- typed-document-node'],
  '@types/jest': ['tsconfig.json', '"jest"'],
  '@types/node': ['tsconfig.json', '"node"'],
};

describe('package.json', () => {
  it('lists only packages the code imports, or tools named where they run', () => {
    const unused = dependencies.filter((name) => {
      if (imported.has(name)) return false;
      const tool = TOOLS[name];
      if (tool) return !read(tool[0]).includes(tool[1]);
      // A type package is used when its package is: @types/ws with ws, @types/a__b with @a/b.
      const typed = /^@types\/(.+)$/.exec(name)?.[1]?.replace(/^(.+)__(.+)$/, '@$1/$2');
      return typed === undefined || !imported.has(typed);
    });
    expect(unused).toEqual([]);
  });

  it('names no tool that is not a dependency', () => {
    expect(Object.keys(TOOLS).filter((name) => !dependencies.includes(name))).toEqual([]);
  });
});

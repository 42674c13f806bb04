#!/usr/bin/env node
// `npm run build` (and `prepack`) of the client package (`--js-only`: the bundles without declarations): an ES module and a CommonJS build of
// src/index.ts, each one file, with graphql, graphql-ws and graphql-sse left to the app, and
// type declarations. esbuild and typescript come from the repository's root devDependencies.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(here, 'dist');
rmSync(dist, { recursive: true, force: true });

const common = {
  entryPoints: [join(here, 'src/index.ts')],
  bundle: true,
  packages: 'external',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
};
await build({ ...common, format: 'esm', outfile: join(dist, 'index.mjs') });
await build({ ...common, format: 'cjs', outfile: join(dist, 'index.cjs') });

// The gateway's own build (`npm run build` at the root) wants the JavaScript only, for the examples.
if (process.argv.includes('--js-only')) process.exit(0);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const types = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
if (types.status !== 0) process.exit(types.status ?? 1);

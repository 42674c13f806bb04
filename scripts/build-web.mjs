#!/usr/bin/env node
// Part of `npm run build`: bundles the dashboard (src/web, with the typed client) for browsers
// into dist/web, next to its static files. The gateway serves that folder at /dashboard.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/web');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'src/web/main.ts')],
  outfile: join(out, 'dashboard.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // Browsers of the last few years; nothing to polyfill.
  target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
  tsconfig: join(root, 'tsconfig.web.json'),
  // graphql-js ships ES modules as .mjs next to its CommonJS files; they bundle smaller.
  resolveExtensions: ['.ts', '.mjs', '.js', '.json'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const file of ['index.html', 'dashboard.css', 'icon.svg']) copyFileSync(join(root, 'src/web', file), join(out, file));

#!/usr/bin/env node
// `pretoken`, `preseed`, `preingest`: builds only when the build is missing or older than a
// source, so `npm run token` takes a moment instead of a full build (6-8 s) every time.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['src', 'packages/client/src', 'scripts/build-web.mjs', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.web.json'];
// build-web.mjs runs last in `npm run build` and always writes the bundle: its time is the build's.
const OUTPUTS = ['dist/web/dashboard.js'];

function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((max, name) => Math.max(max, newest(join(path, name))), stat.mtimeMs);
}

// tsc leaves unchanged outputs alone, so these only have to exist.
const REQUIRED = ['dist/main.js', 'dist/cli/token.js', 'dist/cli/seed.js', 'dist/cli/ingest.js'];
const missing = REQUIRED.some((p) => newest(join(root, p)) === 0);
const built = missing ? -Infinity : Math.min(...OUTPUTS.map((p) => newest(join(root, p)) || -Infinity));
const changed = Math.max(...SOURCES.map((p) => newest(join(root, p))));
if (built < changed) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Jest's global setup. The gateway's worker threads run modules of their own
 * (src/persistence/*.worker.ts); from dist/ each is the compiled .js beside its host. Node 20
 * cannot run TypeScript in a worker, and ts-jest compiles only what the test process itself
 * requires, so the worker entry points are compiled here, once per run, into a directory the
 * hosts find through GATEWAY_COMPILED_WORKERS (src/persistence/worker-file.ts). Under
 * node_modules, so the workers' own imports (better-sqlite3, left out of the bundle: it loads a
 * native addon) resolve as from the source tree.
 */
export default async function compileWorkers(): Promise<void> {
  const root = join(__dirname, '..', '..');
  const sources = join(root, 'src', 'persistence');
  const outdir = join(root, 'node_modules', '.cache', 'gateway-workers');
  await build({
    entryPoints: readdirSync(sources)
      .filter((f) => f.endsWith('.worker.ts'))
      .map((f) => join(sources, f)),
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  process.env.GATEWAY_COMPILED_WORKERS = outdir;
}

import { extname, join } from 'node:path';

/**
 * The file a worker thread runs: `<name>.js`, the compiled module beside its host (dist/).
 * Node 20 cannot run TypeScript in a worker, so under ts-jest, which runs src/ as .ts, the
 * tests' global setup compiles the worker entry points with esbuild (test/support/compile-workers.ts)
 * into the directory it names in GATEWAY_COMPILED_WORKERS.
 */
export function workerFile(name: string): string {
  const compiled = process.env.GATEWAY_COMPILED_WORKERS;
  if (extname(__filename) === '.ts' && compiled) return join(compiled, `${name}.js`);
  return join(__dirname, `${name}.js`);
}

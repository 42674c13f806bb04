import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createGateway } from '../src/main';
import { serveParent, StatementLog } from './bench-child';

/**
 * The gateway for bench/list-sessions.bench.ts and bench/execute.bench.ts, in its own process: what `npm start` runs
 * (configuration from the environment, every adapter, background work, logs on stdout),
 * plus the statement hook the query-count tests use, so the bench can count the SQL of a
 * request. The hook costs one call per statement, and only records while the bench counts.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = new StatementLog();
  const gateway = await createGateway(config, createLogger(config.logLevel), { onQuery: (sql) => log.record(sql) });
  serveParent(await gateway.listen(), log, () => gateway.close());
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

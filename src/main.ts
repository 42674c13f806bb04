import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config';
import { ContextDirectory } from './contexts/context-directory';
import { InProcessTurnEvents } from './events/in-process-turn-events';
import { createProtection } from './graphql/armor';
import type { Services } from './graphql/services';
import { createLogger, type Logger } from './logger';
import { createRetrieval } from './retrieval/create-retrieval';
import { createHttpApp } from './server/http-app';
import { openDatabase, type Database } from './sessions/database';
import { SessionManager } from './sessions/session-manager';
import { TurnProvenance } from './sessions/turn-provenance';

export interface Gateway {
  readonly config: Config;
  readonly services: Services;
  readonly db: Database;
  readonly server: Server;
  /** Listens on config.host:config.port (port 0 picks a free one) and returns the URL. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (bounded), then releases everything. */
  close(): Promise<void>;
}

/**
 * The composition root: configuration picks every adapter (a URL set means the real
 * system, none means the embedded default) and nothing below here knows which it got.
 */
export async function createGateway(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
  hooks: { onQuery?: (sql: string) => void } = {},
): Promise<Gateway> {
  const retrieval = createRetrieval(config, logger);
  logger.info(retrieval.description, 'retrieval configured');
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    logger,
    ...(hooks.onQuery ? { onQuery: hooks.onQuery } : {}),
  });
  const events = new InProcessTurnEvents();
  const services: Services = {
    sessions: new SessionManager({ db, events }),
    contexts: new ContextDirectory(db),
    provenance: new TurnProvenance(db),
    retriever: retrieval.retriever,
  };
  const server = createServer();
  const { app, apollo } = await createHttpApp({
    config,
    logger,
    services,
    protection: createProtection(config.limits, config.isProduction),
    readiness: { database: () => db.ping() },
    httpServer: server,
  });
  server.on('request', app);

  let closing: Promise<void> | null = null;
  return {
    config,
    services,
    db,
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
          resolve(`http://${host}:${port}`);
        });
      }),
    close: () =>
      (closing ??= (async () => {
        const forced = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
        try {
          // Apollo's drain plugin stops new requests and waits for in-flight ones.
          await apollo.stop();
          if (server.listening) await new Promise<void>((r) => server.close(() => r()));
        } finally {
          clearTimeout(forced);
          await retrieval.close();
          await db.close();
        }
      })()),
  };
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`configuration error: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel);
  if (config.jwtSecretIsDefault) {
    logger.warn('JWT_SECRET is not set: using the development secret; tokens from `npm run token` will work');
  }
  const gateway = await createGateway(config, logger);
  const url = await gateway.listen();
  logger.info(
    { url: `${url}/graphql`, database: config.databaseUrl ? gateway.db.dialect : `sqlite in ${config.dataDir}` },
    'gateway listening',
  );
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      (e: unknown) => {
        logger.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}

import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config';
import { ContextDirectory } from './contexts/context-directory';
import { EventPruner } from './events/event-pruner';
import type { EventBus } from './events/event-bus.port';
import { InProcessEventBus } from './events/in-process-event-bus.adapter';
import { RedisEventBus } from './events/redis-event-bus.adapter';
import { TurnEventRepository } from './events/turn-event.repository';
import { TurnEventSequencer } from './events/turn-event-sequencer';
import type { TurnOutputSink } from './events/turn-output';
import { createProtection } from './graphql/armor';
import { SubscriptionExecutor } from './graphql/live/subscription-executor';
import { gatewaySchema } from './graphql/schema';
import type { Services } from './graphql/services';
import { createLogger, type Logger } from './logger';
import { createRetrieval } from './retrieval/create-retrieval';
import { createHttpApp } from './server/http-app';
import { attachGraphQLWebSocket, type GraphQLWebSocketServer } from './server/ws-server';
import { openDatabase, type Database } from './sessions/database';
import { SessionManager } from './sessions/session-manager';
import { TurnProvenance } from './sessions/turn-provenance';

export interface Gateway {
  readonly config: Config;
  readonly services: Services;
  readonly db: Database;
  readonly server: Server;
  /** Where the orchestrator writes streamed answer text (turnOutput subscribers read it). */
  readonly output: TurnOutputSink;
  /** The subscription machinery, for metrics and tests. */
  readonly live: LiveRuntime;
  /** Runs `hook` on shutdown, after HTTP requests drained and before the database closes. */
  onShutdown(name: string, hook: () => Promise<void>): void;
  /** Listens on config.host:config.port (port 0 picks a free one) and returns the URL. */
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish (bounded), then releases everything. */
  close(): Promise<void>;
}

export interface LiveRuntime {
  readonly bus: EventBus;
  readonly executor: SubscriptionExecutor;
  readonly websockets: GraphQLWebSocketServer;
  readonly pruner: EventPruner;
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
  const bus: EventBus = config.live.redisUrl
    ? new RedisEventBus({ url: config.live.redisUrl, keyPrefix: config.live.redisKeyPrefix, logger })
    : new InProcessEventBus(logger);
  const history = new TurnEventRepository(db);
  const statuses = new TurnEventSequencer(bus, history, logger);
  await statuses.start();
  const services: Services = {
    sessions: new SessionManager({ db, events: bus }),
    contexts: new ContextDirectory(db),
    provenance: new TurnProvenance(db),
    retriever: retrieval.retriever,
    live: { statuses, history, output: bus },
  };
  const protection = createProtection(config.limits, config.isProduction);
  const server = createServer();
  const { app, apollo } = await createHttpApp({
    config,
    logger,
    services,
    protection,
    readiness: { database: () => db.ping() },
    degradable: { subscriptions: () => bus.check() },
    httpServer: server,
  });
  server.on('request', app);
  const executor = new SubscriptionExecutor({ logger, shared: config.live.wsSharedExecution });
  const websockets = attachGraphQLWebSocket({ config, logger, services, protection, schema: gatewaySchema(), executor, httpServer: server });
  const pruner = new EventPruner(history, config.live.eventRetentionHours, logger);
  pruner.start();
  const shutdownHooks: { name: string; hook: () => Promise<void> }[] = [];

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
    output: bus,
    live: { bus, executor, websockets, pruner },
    onShutdown: (name, hook) => {
      shutdownHooks.push({ name, hook });
    },
    close: () =>
      (closing ??= (async () => {
        websockets.stopAccepting();
        const forced = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
        try {
          await websockets.close(config.shutdownGraceMs);
          // Apollo's drain plugin stops new requests and waits for in-flight ones.
          await apollo.stop();
          if (server.listening) await new Promise<void>((r) => server.close(() => r()));
        } finally {
          clearTimeout(forced);
          await runHooks(shutdownHooks, config.shutdownGraceMs, logger);
          await pruner.stop();
          statuses.close();
          await bus.close();
          await retrieval.close();
          await db.close();
        }
      })()),
  };
}

/** Shutdown hooks run side by side; one that fails or overruns the bound does not hold up the others. */
async function runHooks(hooks: readonly { name: string; hook: () => Promise<void> }[], boundMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<void>((r) => {
    timer = setTimeout(() => {
      logger.warn({ boundMs }, 'shutdown hooks did not finish in time');
      r();
    }, boundMs);
  });
  await Promise.race([
    Promise.all(
      hooks.map(({ name, hook }) =>
        hook().catch((err: unknown) => logger.error({ err, hook: name }, 'shutdown hook failed')),
      ),
    ),
    overrun,
  ]);
  clearTimeout(timer);
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
    {
      url: `${url}/graphql`,
      database: config.databaseUrl ? gateway.db.dialect : `sqlite in ${config.dataDir}`,
      events: config.live.redisUrl ? 'redis' : 'in-process',
    },
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

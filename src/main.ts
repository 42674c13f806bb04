import 'reflect-metadata';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { eventBusOf, tokenVerifierOf } from './composition/adapters';
import { tuneHeap } from './composition/heap-flags';
import { composeServices } from './composition/services';
import { GatewayShutdown } from './composition/shutdown';
import { loadConfig, type Config } from './config';
import { EventPruner } from './events/event-pruner';
import { openGatewayDatabase, type GatewayDatabase } from './gateway-database';
import type { EventBus } from './events/event-bus.port';
import { TurnEventRepository } from './events/turn-event.repository';
import { TurnEventSequencer } from './events/turn-event-sequencer';
import type { TurnOutputSink } from './events/turn-output.port';
import { createProtection } from './graphql/protection';
import { EventShares } from './graphql/live/event-shares';
import { SubscriptionExecutor } from './graphql/live/subscription-executor';
import { gatewaySchema } from './graphql/schema';
import type { Services } from './graphql/services';
import { createLogger, type Logger } from './logger';
import { httpInstrumentation, liveOperationObserver, operationMetricsPlugin } from './observability/http-instrumentation';
import { busLagListener, statementObserver } from './observability/instrumented-ports';
import { GatewayMetrics, OperationNames } from './observability/metrics';
import { startTracing } from './observability/tracing';
import type { Orchestrator } from './orchestrator/orchestrator';
import { startupErrorLine } from './startup-error';
import { createRetrieval } from './retrieval/create-retrieval';
import type { Retriever } from './retrieval/retrieval.port';
import { blobRouter } from './server/blob-routes';
import { dashboardRouter } from './server/dashboard';
import { createHttpApp } from './server/http-app';
import { LiveOperations } from './server/live-operations';
import { createHttpServer, listenOn } from './server/http-server';
import { listenForMetrics, metricsPlacement, metricsRouter } from './server/metrics-route';
import { restExecuteRouter } from './server/rest-execute';
import { createGraphQLSse, type GraphQLSseServer } from './server/sse-server';
import { attachGraphQLWebSocket, type GraphQLWebSocketServer } from './server/ws-server';
import type { SessionStore } from './sessions/session-store';
import type { Resolve } from './webhooks/webhook-http';

export interface Gateway {
  readonly config: Config;
  readonly services: Services;
  readonly db: GatewayDatabase;
  /** The session store's modules (tests, benchmarks and the seed write through its lifecycle). */
  readonly sessions: SessionStore;
  /** Retrieval as the orchestrator uses it (tests check what an ingest made searchable). */
  readonly retriever: Retriever;
  readonly server: Server;
  /** Where the orchestrator writes streamed answer text (turnOutput subscribers read it). */
  readonly output: TurnOutputSink;
  /** Prometheus metrics (GET /metrics renders them). */
  readonly metrics: GatewayMetrics;
  /** The separate metrics listener's URL when METRICS_PORT is set (it listens from creation on). */
  readonly metricsUrl: string | null;
  /** The subscription machinery, for metrics and tests. */
  readonly live: LiveRuntime;
  /** The turn pipeline (sweeps, in-flight count, lease release). */
  readonly orchestrator: Orchestrator;
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
  readonly sse: GraphQLSseServer;
  /** Auth, limits and the document cache shared by the WebSocket and SSE transports. */
  readonly operations: LiveOperations;
  readonly pruner: EventPruner;
}

/**
 * The composition root: configuration picks every adapter (a URL set means the real
 * system, none means the embedded default) and nothing below here knows which it got.
 */
export async function createGateway(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
  hooks: GatewayHooks = {},
): Promise<Gateway> {
  tuneHeap();
  const tracing = startTracing(config.tracing);
  // Read at scrape time, once everything below exists.
  const metrics = new GatewayMetrics({
    websocketConnections: () => websockets.connections,
    sseStreams: () => sse.streams,
    activeSubscriptions: () => executor.subscriberCount,
    liveGroups: () => executor.groupCount,
    poolUse: () => db.poolUse(),
  });
  const instruments = { metrics, tracing };
  const retrieval = createRetrieval(config, logger);
  logger.info(retrieval.description, 'retrieval configured');
  const db = await openGatewayDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    logger,
    ...(hooks.onQuery ? { onQuery: hooks.onQuery } : {}),
    observeStatement: statementObserver(instruments, config.databaseUrl ? 'mysql' : 'sqlite'),
  });
  const bus = eventBusOf(config, logger);
  const history = new TurnEventRepository(db);
  const statuses = new TurnEventSequencer(bus, history, logger);
  await statuses.start();
  const stopLagWatch = bus.onTurnStatus(busLagListener(metrics));
  const eventShares = new EventShares();
  const { store, webhooks, retriever, blobs, orchestrator, budget, handler, services } = composeServices({
    config,
    logger,
    db,
    bus,
    live: { statuses, history, output: bus },
    eventShares,
    instruments,
    retriever: hooks.retriever ?? retrieval.retriever,
    now: hooks.now ?? (() => new Date()),
    output: hooks.output ?? bus,
    ...(hooks.webhookResolve ? { webhookResolve: hooks.webhookResolve } : {}),
  });
  const protection = createProtection(config.limits, config.isProduction, gatewaySchema());
  const server = createHttpServer(config.http, config.httpKeepAliveTimeoutMs);
  const executor = new SubscriptionExecutor({ logger, shared: config.live.wsSharedExecution, formatError: protection.formatError, shares: eventShares });
  const operationNames = new OperationNames(config.metricsOperationNames);
  const tokens = tokenVerifierOf(config, logger);
  const operations = new LiveOperations({
    config,
    tokens,
    logger,
    services,
    protection,
    schema: gatewaySchema(),
    executor,
    observe: liveOperationObserver(metrics, operationNames, tracing),
  });
  const sse = createGraphQLSse({ config, logger, operations });
  const metricsRoute = metricsRouter({ render: () => metrics.render(), contentType: metrics.contentType, token: config.metricsToken });
  const metricsAt = metricsPlacement(config);
  const { handle, apollo } = await createHttpApp({
    config,
    tokens,
    logger,
    services,
    protection,
    readiness: { database: () => db.ping(), blobs: () => blobs.ping() },
    degradable: { subscriptions: () => bus.check() },
    httpServer: server,
    draining: () => shutdown.draining,
    middleware: [httpInstrumentation(metrics, tracing)],
    plugins: [operationMetricsPlugin(metrics, operationNames)],
    routers: [
      restExecuteRouter({ handler, tokens }),
      ...(metricsAt === 'api' ? [metricsRoute] : []),
      sse.router,
      blobRouter({ blobs, sessions: store.reads, tokens }),
      // Built next to this file by `npm run build` (dist/web).
      dashboardRouter({
        dir: hooks.dashboardDir ?? join(__dirname, 'web'),
        logger,
        signIn: { paste: !(config.auth.dashboard && config.isProduction), provider: config.auth.dashboard },
      }),
    ],
  });
  server.on('request', handle);
  orchestrator.startBackgroundWork({ sweeper: hooks.sweeper ?? true });
  const websockets = attachGraphQLWebSocket({ config, logger, operations, httpServer: server });
  const pruner = new EventPruner(history, config.live.eventRetentionHours, logger);
  pruner.start();
  // A turn's end may have written deliveries: this instance (and, through the bus, every other) looks at once.
  const stopWebhookWake = bus.onTurnStatus((event) => {
    if (event.status !== 'PENDING' || event.previousStatus === null) webhooks.dispatcher.wake();
  });
  if (hooks.webhookSender !== false) webhooks.dispatcher.start();
  const shutdown = new GatewayShutdown(
    { graceMs: config.shutdownGraceMs, logger, websockets, sse, orchestrator, server, apollo, budget, pruner, stopListeners: [stopLagWatch, stopWebhookWake], statuses, bus, retrieval, db, blobs, tracing },
    [
      // Turns still running here after the drain fail as interrupted rather than wait for a sweeper elsewhere.
      { name: 'turn leases', hook: () => orchestrator.releaseLeases() },
      { name: 'webhook sender', hook: () => webhooks.dispatcher.stop() },
    ],
  );
  const metricsListener = metricsAt === 'apart' ? await listenForMetrics(metricsRoute, config.metricsPort ?? 0, config.metricsHost) : null;
  if (metricsListener) shutdown.add('metrics listener', () => metricsListener.close());

  return {
    config,
    services,
    db,
    sessions: store,
    retriever,
    server,
    listen: () => listenOn(server, config.host, config.port),
    output: bus,
    live: { bus, executor, websockets, sse, operations, pruner },
    metrics,
    metricsUrl: metricsListener?.url ?? null,
    orchestrator,
    onShutdown: (name, hook) => shutdown.add(name, hook),
    close: () => shutdown.close(),
  };
}

/** What tests and benchmarks may swap in; production uses the defaults. */
export interface GatewayHooks {
  readonly onQuery?: (sql: string) => void;
  /** The clock of the session store and the orchestrator (chain expiry, leases). */
  readonly now?: () => Date;
  /** Where streamed answer text goes; the event bus by default. */
  readonly output?: TurnOutputSink;
  /** Retrieval as configured by default. */
  readonly retriever?: Retriever;
  /** False keeps the periodic turn sweeper off (its queries would be counted by statement-count tests). */
  readonly sweeper?: boolean;
  /** Where the built dashboard is; dist/web next to the built main.js by default. */
  readonly dashboardDir?: string;
  /** False keeps this instance from sending webhooks (their outbox polls would be counted by statement-count tests). */
  readonly webhookSender?: boolean;
  /** Resolves webhook hosts instead of DNS (tests point names at addresses of their choice). */
  readonly webhookResolve?: Resolve;
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  if (config.auth.oidc && !config.auth.oidc.issuer) {
    logger.warn('AUTH_JWKS_URL without AUTH_ISSUER: the "iss" of tokens is not checked');
  }
  if (config.jwtSecretIsDefault && config.auth.acceptSharedSecret) {
    logger.warn('JWT_SECRET is not set: using the development secret; tokens from `npm run token` will work');
  }
  if (!config.openaiApiKey) {
    logger.warn('OPENAI_API_KEY is not set: execute answers come from the offline adapter (labelled, deterministic, no model)');
  }
  const gateway = await createGateway(config, logger);
  const url = await gateway.listen();
  logger.info(
    {
      url: `${url}/graphql`,
      database: config.databaseUrl ? gateway.db.dialect : `sqlite in ${config.dataDir}`,
      events: config.live.redisUrl ? 'redis' : 'in-process',
      llm: config.openaiApiKey ? `openai (${config.openaiBaseUrl ?? 'api.openai.com'})` : 'offline',
      blobs: config.blobs.s3Bucket ? `s3://${config.blobs.s3Bucket}` : `sqlite in ${config.dataDir}/blobs.sqlite`,
      dashboard: `${url}/dashboard`,
      metrics: gateway.metricsUrl ? `${gateway.metricsUrl}/metrics` : metricsPlacement(config) === 'api' ? `${url}/metrics` : 'not served (production without METRICS_TOKEN or METRICS_PORT)',
      token: 'npm run --silent token -- --user <id> --org <id> [--admin]',
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
    // One line naming what to fix; the stack only when asked for (LOG_LEVEL=debug or trace).
    const config = configOrNull();
    console.error(startupErrorLine(e, config));
    if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '') && e instanceof Error) console.error(e.stack);
    process.exit(1);
  });
}

function configOrNull(): Config | null {
  try {
    return loadConfig();
  } catch {
    return null;
  }
}

import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { BlobStore } from './blobs/blob-store.port';
import { LimitedExecuteBudget } from './budgets/execute-budget';
import type { ExecuteBudget } from './budgets/execute-budget.port';
import { memoryBudgetStores } from './budgets/memory-budget.adapter';
import { SqliteBlobStore } from './blobs/sqlite.adapter';
import { loadConfig, type Config } from './config';
import { ContextDirectory } from './contexts/context-directory';
import { EventPruner } from './events/event-pruner';
import { openGatewayDatabase, type GatewayDatabase } from './gateway-database';
import type { EventBus } from './events/event-bus.port';
import { InProcessEventBus } from './events/in-process-event-bus.adapter';
import { TurnEventRepository } from './events/turn-event.repository';
import { TurnEventSequencer } from './events/turn-event-sequencer';
import { StatusRouter } from './graphql/live/status-router';
import type { TurnOutputSink } from './events/turn-output.port';
import { createProtection } from './graphql/protection';
import { IdempotencyKeys } from './idempotency/idempotency-keys';
import { SubscriptionExecutor } from './graphql/live/subscription-executor';
import { gatewaySchema } from './graphql/schema';
import type { Services } from './graphql/services';
import type { LanguageModel } from './llm/llm.port';
import { OfflineLanguageModel } from './llm/offline.adapter';
import { createLogger, type Logger } from './logger';
import { httpInstrumentation, liveOperationObserver, operationMetricsPlugin } from './observability/http-instrumentation';
import { busLagListener, CountingTurnEventSink, InstrumentedLanguageModel, InstrumentedRetriever, statementObserver } from './observability/instrumented-ports';
import { GatewayMetrics, OperationNames } from './observability/metrics';
import { startTracing } from './observability/tracing';
import { IdempotentCalls } from './orchestrator/idempotent-calls';
import { HISTORY_WINDOW } from './orchestrator/instruction-planner';
import { Orchestrator } from './orchestrator/orchestrator';
import { RequestHandler } from './orchestrator/request-handler';
import { SessionForker } from './orchestrator/session-forker';
import { startupErrorLine } from './startup-error';
import { createRetrieval } from './retrieval/create-retrieval';
import type { Retriever } from './retrieval/retrieval.port';
import { blobRouter } from './server/blob-routes';
import { dashboardRouter } from './server/dashboard';
import { createHttpApp } from './server/http-app';
import { LiveOperations } from './server/live-operations';
import { createHttpServer } from './server/http-server';
import { listenForMetrics, metricsPlacement, metricsRouter } from './server/metrics-route';
import { restExecuteRouter } from './server/rest-execute';
import { createGraphQLSse, type GraphQLSseServer } from './server/sse-server';
import { attachGraphQLWebSocket, type GraphQLWebSocketServer } from './server/ws-server';
import { ChainHistoryCache } from './sessions/chain-history-cache';
import { createSessionStore, type SessionStore } from './sessions/session-store';
import { TurnProvenance } from './sessions/turn-provenance';
import { UsageReport } from './sessions/usage-report';
import type { Resolve } from './webhooks/webhook-http';
import { createWebhooks } from './webhooks/webhooks';
import { AlgorithmRoutingVerifier } from './auth/algorithm-routing';
import { JwksTokenVerifier } from './auth/jwks.adapter';
import { SharedSecretTokenVerifier } from './auth/shared-secret.adapter';
import type { TokenVerifier } from './auth/token-verifier.port';

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
  boundHeapGrowth();
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
  const now = hooks.now ?? (() => new Date());
  const instanceId = `gw-${randomUUID()}`;
  const store = createSessionStore({
    db,
    events: new CountingTurnEventSink(bus, metrics),
    now,
    webhooks: { retryWindowSeconds: config.webhooks.retryWindowSeconds, publicUrl: config.webhooks.publicUrl },
  });
  const webhooks = createWebhooks({ config, db, now, logger, instanceId, ...(hooks.webhookResolve ? { resolve: hooks.webhookResolve } : {}) });
  const contexts = new ContextDirectory(db);
  const retriever = new InstrumentedRetriever(hooks.retriever ?? retrieval.retriever, instruments);
  const blobs = blobStoreOf(config);
  const idempotencyKeys = new IdempotencyKeys(db, now);
  const orchestrator = new Orchestrator({
    sessions: store.lifecycle,
    history: new ChainHistoryCache(store.batch, { window: HISTORY_WINDOW, maxObjects: CHAIN_HISTORY_OBJECTS }),
    leases: store.leases,
    contexts,
    blobs,
    llm: new InstrumentedLanguageModel(languageModelOf(config, () => metrics.llmRetries.inc()), instruments),
    retriever,
    retrievalLimit: config.retrieval.topK,
    output: hooks.output ?? bus,
    idempotencyKeys,
    config: config.execute,
    logger,
    now,
    instanceId,
  });
  const { execute } = config;
  const budget = executeBudgetOf(config, logger);
  const handler = new RequestHandler({
    budget,
    orchestrator,
    idempotency: new IdempotentCalls(
      idempotencyKeys,
      {
        waitMs: execute.idempotencyWaitMs,
        retentionSeconds: execute.idempotencyRetentionSeconds,
        // A first call past every provider attempt and its lease has died with its instance.
        runningMs: execute.llmTimeoutMs * (execute.llmMaxRetries + 1) + execute.turnLeaseSeconds * 1000,
      },
      logger,
      now,
    ),
    logger,
  });
  const services: Services = {
    sessions: store.reads,
    sessionBatches: store.batch,
    sessionCommands: store.lifecycle,
    contexts,
    provenance: new TurnProvenance(db),
    usage: new UsageReport(db, now),
    live: { statuses: new StatusRouter(statuses, store.batch, logger), history, output: bus },
    execute: handler,
    forks: new SessionForker({ sessions: store.lifecycle, forks: store.forks, blobs }),
    forkLineage: store.forks,
    webhooks: webhooks.endpoints,
  };
  const protection = createProtection(config.limits, config.isProduction, gatewaySchema());
  const server = createHttpServer(config.http, config.httpKeepAliveTimeoutMs);
  const executor = new SubscriptionExecutor({ logger, shared: config.live.wsSharedExecution, formatError: protection.formatError });
  const operationNames = new OperationNames(config.metricsOperationNames);
  const tokens = tokenVerifier(config, logger);
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
    draining: () => draining,
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
  // Turns still running here after the drain fail as interrupted rather than wait for a sweeper elsewhere.
  const shutdownHooks: { name: string; hook: () => Promise<void> }[] = [
    { name: 'turn leases', hook: () => orchestrator.releaseLeases() },
    { name: 'webhook sender', hook: () => webhooks.dispatcher.stop() },
  ];

  const metricsListener = metricsAt === 'apart' ? await listenForMetrics(metricsRoute, config.metricsPort ?? 0, config.metricsHost) : null;
  if (metricsListener) shutdownHooks.push({ name: 'metrics listener', hook: () => metricsListener.close() });

  let closing: Promise<void> | null = null;
  let draining = false;
  return {
    config,
    services,
    db,
    sessions: store,
    retriever,
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        // Node's default backlog (511) drops the SYNs of a burst of connections beyond it; their
        // clients retry after 1, 3, 7, 15 s... (the kernel caps this at net.core.somaxconn).
        server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, () => {
          const { port } = server.address() as AddressInfo;
          const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
          resolve(`http://${host}:${port}`);
        });
      }),
    output: bus,
    live: { bus, executor, websockets, sse, operations, pruner },
    metrics,
    metricsUrl: metricsListener?.url ?? null,
    orchestrator,
    onShutdown: (name, hook) => {
      shutdownHooks.push({ name, hook });
    },
    close: () =>
      (closing ??= (async () => {
        // The drain (README "Running several instances"): /readyz answers 503 from now on, so
        // the balancer stops routing here. Subscribers are sent away at once (1012, streams
        // ended) and resume elsewhere with afterEventId, since every instance publishes every
        // event. New turns are refused (retryable); the turns running here may finish within
        // the grace while requests are still served, then connections drain within another.
        draining = true;
        logger.info({ turnsInFlight: orchestrator.inFlightCount, websockets: websockets.connections, eventStreams: sse.streams }, 'draining');
        websockets.stopAccepting();
        sse.close();
        await Promise.all([websockets.close(config.shutdownGraceMs), orchestrator.drain(config.shutdownGraceMs)]);
        const forced = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
        try {
          // Apollo's drain plugin stops new requests and waits for in-flight ones.
          await apollo.stop();
          if (server.listening) await new Promise<void>((r) => server.close(() => r()));
        } finally {
          clearTimeout(forced);
          await runHooks(shutdownHooks, config.shutdownGraceMs, logger);
          await budget.close();
          await pruner.stop();
          stopLagWatch();
          stopWebhookWake();
          statuses.close();
          await bus.close();
          await retrieval.close();
          await db.close();
          // Last: the shutdown hooks above may still write a turn's partial answer.
          await blobs.close?.();
          await tracing.shutdown();
        }
      })()),
  };
}

/** Connections the kernel may hold for the gateway to accept (a burst of 2,000 executes). */
const LISTEN_BACKLOG = 4096;

/**
 * What the planner's cache of settled turns may hold (chain-history-cache.ts), in turns and
 * their file and chunk references: enough for the sessions an instance is working on now, at
 * a bounded heap (per-object size and the resulting bound: docs/performance.md). A session
 * it forgot costs one full read on its next execute.
 */
const CHAIN_HISTORY_OBJECTS = 100_000;

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

/**
 * Under load most of what a request allocates is still referenced when the young generation
 * is collected (it waits on the database), so it is promoted and dies in the old generation.
 * V8 then lets the old generation grow to several times the live heap before collecting
 * it, and RSS after the list bench is mostly garbage. Growing by 25% instead keeps RSS close
 * to the live heap for little more GC time (docs/performance.md has the figures).
 * An explicit --heap-growing-percent on the command line wins.
 */
const HEAP_GROWING_PERCENT = 25;
function boundHeapGrowth(): void {
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/*
 * Adapters of optional services (Redis, S3, OpenAI) are loaded only when configured: their
 * client libraries would otherwise take memory in every instance (docs/performance.md). (A
 * synchronous require: the choice is made while wiring, and jest runs this code as CommonJS.)
 */
type RedisBudgetModule = typeof import('./budgets/redis-budget.adapter');

/** The Redis bus when REDIS_URL is set, else events stay in this process. */
function eventBusOf(config: Config, logger: Logger): EventBus {
  const { redisUrl, redisKeyPrefix, redisTimeoutMs } = config.live;
  if (!redisUrl) return new InProcessEventBus(logger);
  const { RedisEventBus } = require('./events/redis-event-bus.adapter') as typeof import('./events/redis-event-bus.adapter');
  return new RedisEventBus({ url: redisUrl, keyPrefix: redisKeyPrefix, timeoutMs: redisTimeoutMs, logger });
}

/** Budgets shared through Redis when REDIS_URL is set, else counted in this process. */
function executeBudgetOf(config: Config, logger: Logger): ExecuteBudget {
  const { redisUrl, redisKeyPrefix, redisTimeoutMs } = config.live;
  const stores = redisUrl
    ? (require('./budgets/redis-budget.adapter') as RedisBudgetModule).redisBudgetStores(config.budgets, {
        url: redisUrl,
        keyPrefix: redisKeyPrefix,
        timeoutMs: redisTimeoutMs,
        logger,
      })
    : memoryBudgetStores(config.budgets);
  // A slot lapses like a turn lease: renewed while its instance lives.
  return new LimitedExecuteBudget({ limits: config.budgets, stores, slotTtlMs: config.execute.turnLeaseSeconds * 1000, logger });
}

/** S3 when S3_BUCKET is set, else the embedded store in DATA_DIR/blobs.sqlite. */
function blobStoreOf(config: Config): BlobStore & { close?(): Promise<void> } {
  const { s3Bucket, s3Endpoint, s3Region, s3ForcePathStyle } = config.blobs;
  if (!s3Bucket) return new SqliteBlobStore(config.dataDir);
  const { S3BlobStore } = require('./blobs/s3.adapter') as typeof import('./blobs/s3.adapter');
  return new S3BlobStore({ bucket: s3Bucket, endpoint: s3Endpoint, region: s3Region, forcePathStyle: s3ForcePathStyle });
}

/** The OpenAI Responses API when OPENAI_API_KEY is set, else the offline adapter. */
function languageModelOf(config: Config, onRetry: () => void): LanguageModel {
  if (!config.openaiApiKey) return new OfflineLanguageModel();
  const { OpenAIResponsesAdapter } = require('./llm/openai-responses.adapter') as typeof import('./llm/openai-responses.adapter');
  const { llmTimeoutMs, llmMaxRetries, llmRetryMaxDelayMs } = config.execute;
  return new OpenAIResponsesAdapter({
    apiKey: config.openaiApiKey,
    baseURL: config.openaiBaseUrl,
    organization: config.openaiOrganization,
    project: config.openaiProject,
    timeoutMs: llmTimeoutMs,
    retry: { maxRetries: llmMaxRetries, maxDelayMs: llmRetryMaxDelayMs },
    onRetry,
  });
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

/** HS256 with JWT_SECRET (or the development secret), the identity provider's JWKS, or both (issue 41). */
function tokenVerifier({ auth, jwtSecret }: Config, logger: Logger): TokenVerifier {
  return new AlgorithmRoutingVerifier({
    sharedSecret: auth.acceptSharedSecret ? new SharedSecretTokenVerifier(jwtSecret) : null,
    provider: auth.oidc ? new JwksTokenVerifier(auth.oidc, logger) : null,
  });
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

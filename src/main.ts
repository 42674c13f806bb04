import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BlobStore } from './blobs/blob-store.port';
import { FilesystemBlobStore } from './blobs/filesystem.adapter';
import { S3BlobStore } from './blobs/s3.adapter';
import { ConfigError, loadConfig, type Config } from './config';
import { ContextDirectory } from './contexts/context-directory';
import { InProcessTurnEvents } from './events/in-process-turn-events';
import { discardOutput, type TurnOutputSink } from './events/turn-output';
import { createProtection } from './graphql/armor';
import type { Services } from './graphql/services';
import type { LanguageModel } from './llm/llm.port';
import { OfflineLanguageModel } from './llm/offline.adapter';
import { OpenAIResponsesAdapter } from './llm/openai-responses.adapter';
import { createLogger, type Logger } from './logger';
import { IdempotentCalls } from './orchestrator/idempotent-calls';
import { Orchestrator } from './orchestrator/orchestrator';
import { RequestHandler } from './orchestrator/request-handler';
import { noRetrieval, type Retriever } from './retrieval/retrieval.port';
import { blobRouter } from './server/blob-routes';
import { createHttpApp } from './server/http-app';
import { restExecuteRouter } from './server/rest-execute';
import { openDatabase, type Database } from './sessions/database';
import { IdempotencyKeys } from './sessions/idempotency-keys';
import { SessionManager } from './sessions/session-manager';

export interface Gateway {
  readonly config: Config;
  readonly services: Services;
  readonly db: Database;
  readonly server: Server;
  readonly orchestrator: Orchestrator;
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
  hooks: GatewayHooks = {},
): Promise<Gateway> {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    logger,
    ...(hooks.onQuery ? { onQuery: hooks.onQuery } : {}),
  });
  const events = new InProcessTurnEvents();
  const now = hooks.now ?? (() => new Date());
  const sessions = new SessionManager({ db, events, now });
  const contexts = new ContextDirectory(db);
  const blobs = blobStoreOf(config);
  const idempotencyKeys = new IdempotencyKeys(db, now);
  const orchestrator = new Orchestrator({
    sessions,
    contexts,
    blobs,
    llm: languageModelOf(config),
    retriever: hooks.retriever ?? noRetrieval,
    output: hooks.output ?? discardOutput,
    idempotencyKeys,
    config: config.execute,
    logger,
    now,
    instanceId: `gw-${randomUUID()}`,
  });
  const { execute } = config;
  const handler = new RequestHandler({
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
  const services: Services = { sessions, contexts, execute: handler };
  const server = createServer();
  const { app, apollo } = await createHttpApp({
    config,
    logger,
    services,
    protection: createProtection(config.limits, config.isProduction),
    readiness: { database: () => db.ping(), blobs: () => blobs.ping() },
    httpServer: server,
    routers: [
      restExecuteRouter({ handler, jwtSecret: config.jwtSecret, bodyLimitBytes: config.limits.bodyLimitBytes, logger }),
      blobRouter({ blobs, sessions, jwtSecret: config.jwtSecret, logger }),
    ],
  });
  server.on('request', app);
  orchestrator.startBackgroundWork();

  let closing: Promise<void> | null = null;
  return {
    config,
    services,
    db,
    server,
    orchestrator,
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
          // Turns still running here fail as interrupted rather than wait for a sweeper elsewhere.
          await orchestrator.releaseLeases().catch((e: unknown) => logger.warn({ err: e }, 'could not release turn leases'));
          await db.close();
        }
      })()),
  };
}

/** What tests and benchmarks may swap in; production uses the defaults. */
export interface GatewayHooks {
  readonly onQuery?: (sql: string) => void;
  /** The clock of the session manager and the orchestrator (chain expiry, leases). */
  readonly now?: () => Date;
  /** Until the live-subscription issue lands, streamed deltas are discarded by default. */
  readonly output?: TurnOutputSink;
  /** Until the retrieval issue lands, retrieval finds nothing by default. */
  readonly retriever?: Retriever;
}

/** S3 when S3_BUCKET is set, else files under DATA_DIR/blobs. */
function blobStoreOf(config: Config): BlobStore {
  const { s3Bucket, s3Endpoint, s3Region, s3ForcePathStyle } = config.blobs;
  if (!s3Bucket) return new FilesystemBlobStore(config.dataDir);
  return new S3BlobStore({ bucket: s3Bucket, endpoint: s3Endpoint, region: s3Region, forcePathStyle: s3ForcePathStyle });
}

/** The OpenAI Responses API when OPENAI_API_KEY is set, else the offline adapter. */
function languageModelOf(config: Config): LanguageModel {
  if (!config.openaiApiKey) return new OfflineLanguageModel();
  const { llmTimeoutMs, llmMaxRetries, llmRetryMaxDelayMs } = config.execute;
  return new OpenAIResponsesAdapter({
    apiKey: config.openaiApiKey,
    baseURL: config.openaiBaseUrl,
    timeoutMs: llmTimeoutMs,
    retry: { maxRetries: llmMaxRetries, maxDelayMs: llmRetryMaxDelayMs },
  });
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
  if (!config.openaiApiKey) {
    logger.warn('OPENAI_API_KEY is not set: execute answers come from the offline adapter (labelled, deterministic, no model)');
  }
  const gateway = await createGateway(config, logger);
  const url = await gateway.listen();
  logger.info(
    {
      url: `${url}/graphql`,
      database: config.databaseUrl ? gateway.db.dialect : `sqlite in ${config.dataDir}`,
      llm: config.openaiApiKey ? `openai (${config.openaiBaseUrl ?? 'api.openai.com'})` : 'offline',
      blobs: config.blobs.s3Bucket ? `s3://${config.blobs.s3Bucket}` : `files in ${config.dataDir}/blobs`,
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

import { randomUUID } from 'node:crypto';
import type { Config } from '../config';
import { ContextCache } from '../contexts/context-cache';
import { ContextDirectory } from '../contexts/context-directory';
import type { EventBus } from '../events/event-bus.port';
import type { LiveFeeds } from '../events/live-feeds';
import type { TurnOutputSink } from '../events/turn-output.port';
import type { GatewayDatabase } from '../gateway-database';
import type { EventShares } from '../graphql/live/event-shares';
import { StatusRouter } from '../graphql/live/status-router';
import type { Services } from '../graphql/services';
import { IdempotencyKeys } from '../idempotency/idempotency-keys';
import type { Logger } from '../logger';
import { CountingTurnEventSink, InstrumentedLanguageModel, InstrumentedRetriever, type Instruments } from '../observability/instrumented-ports';
import { IdempotentCalls } from '../orchestrator/idempotent-calls';
import { HISTORY_WINDOW } from '../orchestrator/instruction-planner';
import { Orchestrator } from '../orchestrator/orchestrator';
import { RequestHandler } from '../orchestrator/request-handler';
import { SessionForker } from '../orchestrator/session-forker';
import type { Retriever } from '../retrieval/retrieval.port';
import { ChainHistoryCache } from '../sessions/chain-history-cache';
import { createSessionStore } from '../sessions/session-store';
import { TurnProvenance } from '../sessions/turn-provenance';
import { UsageReport } from '../sessions/usage-report';
import type { Resolve } from '../webhooks/webhook-http';
import { createWebhooks } from '../webhooks/webhooks';
import { WebhookSubscriptions } from '../webhooks/webhook-subscriptions';
import { blobStoreOf, executeBudgetOf, languageModelOf } from './adapters';

/**
 * What the planner's cache of settled turns may hold (chain-history-cache.ts), in turns and
 * their file and chunk references: enough for the sessions an instance is working on now, at
 * a bounded heap (per-object size and the resulting bound: docs/performance.md). A session
 * it forgot costs one full read on its next execute.
 */
const CHAIN_HISTORY_OBJECTS = 100_000;

export interface ServiceDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: GatewayDatabase;
  /** Where the session store publishes status events. */
  readonly bus: EventBus;
  readonly live: LiveFeeds;
  /** What live events' processing shares (the status router here, the live groups in the executor). */
  readonly eventShares: EventShares;
  readonly instruments: Instruments;
  /** Retrieval as configured (or as a test scripts it), before instrumentation. */
  readonly retriever: Retriever;
  /** The clock of the session store and the orchestrator (chain expiry, leases). */
  readonly now: () => Date;
  /** Where the orchestrator writes streamed answer text. */
  readonly output: TurnOutputSink;
  readonly webhookResolve?: Resolve;
}

/**
 * The stores and the turn pipeline behind the transports: what resolvers, REST execute and
 * blob downloads get (`services`), and the parts the gateway runs and shuts down itself.
 */
export function composeServices(deps: ServiceDeps) {
  const { config, logger, db, bus, live, eventShares, instruments, now, output, webhookResolve } = deps;
  const instanceId = `gw-${randomUUID()}`;
  const subscriptions = new WebhookSubscriptions(db, { logger });
  const store = createSessionStore({
    db,
    events: new CountingTurnEventSink(bus, instruments.metrics),
    now,
    webhooks: { retryWindowSeconds: config.webhooks.retryWindowSeconds, publicUrl: config.webhooks.publicUrl, subscriptions },
  });
  const webhooks = createWebhooks({ config, db, now, logger, instanceId, subscriptions, ...(webhookResolve ? { resolve: webhookResolve } : {}) });
  // Called only once both exist (after a change of a context).
  const contexts = new ContextDirectory(db, undefined, (orgId) => executeContexts.changed(orgId));
  const executeContexts = new ContextCache(contexts);
  const retriever = new InstrumentedRetriever(deps.retriever, instruments);
  const blobs = blobStoreOf(config, logger);
  const idempotencyKeys = new IdempotencyKeys(db, now);
  const orchestrator = new Orchestrator({
    sessions: store.lifecycle,
    history: new ChainHistoryCache(store.batch, { window: HISTORY_WINDOW, maxObjects: CHAIN_HISTORY_OBJECTS }),
    leases: store.leases,
    contexts: executeContexts,
    blobs,
    llm: new InstrumentedLanguageModel(languageModelOf(config, () => instruments.metrics.llmRetries.inc()), instruments),
    retriever,
    retrievalLimit: config.retrieval.topK,
    output,
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
    live: { ...live, statuses: new StatusRouter(live.statuses, store.batch, logger, eventShares) },
    execute: handler,
    forks: new SessionForker({ sessions: store.lifecycle, forks: store.forks, blobs }),
    forkLineage: store.forks,
    webhooks: webhooks.endpoints,
  };
  return { store, webhooks, retriever, blobs, orchestrator, budget, handler, services };
}

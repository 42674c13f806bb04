import type { Config } from '../config';
import type { Logger } from '../logger.port';
import type { Database } from '../persistence/database';
import type { WebhookEntities } from './webhook.entities';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookEndpoints } from './webhook-endpoints';
import { sendWebhook, systemResolve, type Resolve } from './webhook-http';
import { WebhookQueue } from './webhook-queue';
import type { WebhookSubscriptions } from './webhook-subscriptions';

export interface Webhooks {
  /** What GraphQL's admins manage. */
  readonly endpoints: WebhookEndpoints;
  /** This instance's sending loop (started and stopped by the composition root). */
  readonly dispatcher: WebhookDispatcher;
}

/** Headroom of a claim beyond its attempt's timeout, for recording the attempt. */
const LEASE_MARGIN_MS = 5_000;

/** The webhook feature as configured; `resolve` replaces DNS (tests resolve names of their own). */
export function createWebhooks(deps: {
  readonly config: Config;
  readonly db: Database<WebhookEntities>;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly instanceId: string;
  readonly resolve?: Resolve;
  /** Told of every change to an org's endpoints made here. */
  readonly subscriptions?: Pick<WebhookSubscriptions, 'changed'>;
}): Webhooks {
  const { config, db, now, logger } = deps;
  const settings = config.webhooks;
  const rules = { production: config.isProduction, allowPrivateNetworks: settings.allowPrivateNetworks };
  const retryWindowMs = settings.retryWindowSeconds * 1000;
  const dispatcher = new WebhookDispatcher({
    queue: new WebhookQueue(db),
    send: (request) =>
      sendWebhook(request, {
        ...rules,
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: settings.maxResponseBytes,
        resolve: deps.resolve ?? systemResolve,
      }),
    retry: { baseDelayMs: settings.retryBaseDelayMs, maxDelayMs: settings.retryMaxDelayMs },
    limits: {
      endpointConcurrency: settings.endpointConcurrency,
      endpointRatePerSecond: settings.endpointRatePerSecond,
      maxInFlight: settings.maxInFlight,
      pollIntervalMs: settings.pollIntervalMs,
      leaseMs: 2 * settings.timeoutMs + LEASE_MARGIN_MS,
      retentionDays: settings.retentionDays,
    },
    owner: deps.instanceId,
    now,
    logger,
  });
  const { subscriptions } = deps;
  const endpoints = new WebhookEndpoints(db, {
    rules,
    now,
    retryWindowMs,
    onDue: () => dispatcher.wake(),
    ...(subscriptions ? { onChanged: (orgId: string) => subscriptions.changed(orgId) } : {}),
  });
  return { endpoints, dispatcher };
}

import { randomUUID } from 'node:crypto';
import type { EventLogEntities } from '../events/event-log.entities';
import { EventLogWriter } from '../events/event-log-writer';
import type { TurnEventSink } from '../events/turn-events';
import type { Database } from '../persistence/database';
import { urlMaker } from '../webhooks/webhook-payload';
import { DEFAULT_WEBHOOK_RETRY_WINDOW_SECONDS } from '../webhooks/webhook-rules';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import type { WebhookSubscriptions } from '../webhooks/webhook-subscriptions';
import type { ForkEntities } from './fork.entities';
import type { ProvenanceEntities } from './provenance.entities';
import { SessionBatchReads } from './session-batch-reads';
import { SessionForks } from './session-forks';
import { SessionLocks } from './session-locks';
import { SessionEdits } from './session-edits';
import { SessionReads } from './session-reads';
import type { SessionEntities } from './session.entities';
import { TurnLeaseStore } from './turn-leases';
import { TurnLifecycle } from './turn-lifecycle';

export interface SessionStoreDeps {
  readonly db: Database<SessionEntities & ProvenanceEntities & EventLogEntities & ForkEntities>;
  /** Where status events go once their transaction has committed (the event bus). */
  readonly events: TurnEventSink;
  readonly now?: () => Date;
  readonly newId?: () => string;
  /** How the webhook deliveries written with each change are made (config.ts `webhooks`; defaults: 24 h, gateway paths). */
  readonly webhooks?: {
    readonly retryWindowSeconds: number;
    readonly publicUrl: string | null;
    /** Which events each org subscribes to; without it every event gets its outbox statement. */
    readonly subscriptions?: Pick<WebhookSubscriptions, 'mayWant'>;
  };
}

/**
 * The session store (spec IAgentSessionManager), one module per seam. The composition root
 * hands each user its own view (session-store.port.ts): the orchestrator the lifecycle and
 * the leases, resolvers the reads, the batch reads and the session commands.
 */
export interface SessionStore {
  /** DD-003 reads. */
  readonly reads: SessionReads;
  /** Batch reads for the DataLoaders. */
  readonly batch: SessionBatchReads;
  /** The only writer of sessions and turns. */
  readonly lifecycle: TurnLifecycle;
  readonly leases: TurnLeaseStore;
  /** Forks: their writer and their lineage reads. */
  readonly forks: SessionForks;
}

export function createSessionStore(deps: SessionStoreDeps): SessionStore {
  const now = deps.now ?? (() => new Date());
  const reads = new SessionReads(deps.db);
  const batch = new SessionBatchReads(deps.db);
  const locks = new SessionLocks(deps.db);
  const outbox = new WebhookOutbox(deps.db, {
    now,
    retryWindowMs: (deps.webhooks?.retryWindowSeconds ?? DEFAULT_WEBHOOK_RETRY_WINDOW_SECONDS) * 1000,
    url: urlMaker(deps.webhooks?.publicUrl ?? null),
    ...(deps.webhooks?.subscriptions ? { subscriptions: deps.webhooks.subscriptions } : {}),
  });
  const lifecycle = new TurnLifecycle({
    db: deps.db,
    locks,
    eventLog: new EventLogWriter(deps.db, now),
    events: deps.events,
    outbox,
    reads,
    batch,
    edits: new SessionEdits({ db: deps.db, locks, now }),
    now,
    newId: deps.newId ?? randomUUID,
  });
  return { reads, batch, lifecycle, leases: new TurnLeaseStore(deps.db, now), forks: new SessionForks(deps.db, { locks, outbox, now }) };
}

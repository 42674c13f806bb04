import type { ContextCatalog } from '../contexts/context-directory.port';
import type { LiveFeeds } from '../events/live-feeds';
import type { RequestHandler } from '../orchestrator/request-handler';
import type { SessionForker } from '../orchestrator/session-forker';
import type { SessionForkReader } from '../sessions/session-forks.port';
import type { SessionBatchReader, SessionCommands, SessionReader } from '../sessions/session-store.port';
import type { TurnProvenance } from '../sessions/turn-provenance';
import type { UsageReport } from '../sessions/usage-report';
import type { WebhookEndpoints } from '../webhooks/webhook-endpoints';

/**
 * Exactly what resolvers (and the live subscriptions) get; the composition root builds it.
 * They read sessions and turns and may change a session's own fields; turns change only
 * through `execute` (the orchestrator), and leases are never theirs.
 */
export interface Services {
  /** DD-003 reads. */
  readonly sessions: SessionReader;
  /** One statement per DataLoader batch (see loaders.ts). */
  readonly sessionBatches: SessionBatchReader;
  /** updateAgentSession, deleteAgentSession. */
  readonly sessionCommands: SessionCommands;
  readonly contexts: ContextCatalog;
  /** Which turns used a chunk or a file version. */
  readonly provenance: TurnProvenance;
  /** Turns and cost per day (the dashboard's usage chart). */
  readonly usage: UsageReport;
  readonly live: LiveFeeds;
  /** Every execute entry point goes through this one handler (DD-001). */
  readonly execute: RequestHandler;
  /** forkAgentSession. */
  readonly forks: SessionForker;
  /** Fork lineage: forkedFrom, forks, and which turns are inherited copies. */
  readonly forkLineage: SessionForkReader;
  /** Webhook endpoints and their deliveries (org admins). */
  readonly webhooks: WebhookEndpoints;
}

import type { ContextDirectory } from '../contexts/context-directory';
import type { LiveFeeds } from '../events/live-feeds';
import type { RequestHandler } from '../orchestrator/request-handler';
import type { Retriever } from '../retrieval/retrieval.port';
import type { SessionManager } from '../sessions/session-manager';
import type { TurnProvenance } from '../sessions/turn-provenance';
import type { UsageReport } from '../sessions/usage-report';

/** The application services resolvers may use; the composition root builds them. */
export interface Services {
  readonly sessions: SessionManager;
  readonly contexts: ContextDirectory;
  /** Which turns used a chunk or a file version. */
  readonly provenance: TurnProvenance;
  /** Turns and cost per day (the dashboard's usage chart). */
  readonly usage: UsageReport;
  /** The vector store behind the agent contexts' collections (for the orchestrator). */
  readonly retriever: Retriever;
  readonly live: LiveFeeds;
  /** Every execute entry point goes through this one handler (DD-001). */
  readonly execute: RequestHandler;
}

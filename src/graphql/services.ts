import type { ContextDirectory } from '../contexts/context-directory';
import type { Retriever } from '../retrieval/retrieval.port';
import type { SessionManager } from '../sessions/session-manager';

/** The application services resolvers may call; the composition root builds them. */
export interface Services {
  readonly sessions: SessionManager;
  readonly contexts: ContextDirectory;
  /** The vector store behind the agent contexts' collections (for the orchestrator). */
  readonly retriever: Retriever;
}

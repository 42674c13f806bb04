import type { ContextDirectory } from '../contexts/context-directory';
import type { SessionManager } from '../sessions/session-manager';

/** The application services resolvers may call; the composition root builds them. */
export interface Services {
  readonly sessions: SessionManager;
  readonly contexts: ContextDirectory;
}

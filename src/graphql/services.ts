import type { ContextDirectory } from '../contexts/context-directory';
import type { LiveFeeds } from '../events/live-feeds';
import type { SessionManager } from '../sessions/session-manager';

/** The application services resolvers may use; the composition root builds them. */
export interface Services {
  readonly sessions: SessionManager;
  readonly contexts: ContextDirectory;
  readonly live: LiveFeeds;
}

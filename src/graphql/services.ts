import type { ContextDirectory } from '../contexts/context-directory';
import type { RequestHandler } from '../orchestrator/request-handler';
import type { SessionManager } from '../sessions/session-manager';

/** The application services resolvers may call; the composition root builds them. */
export interface Services {
  readonly sessions: SessionManager;
  readonly contexts: ContextDirectory;
  /** Every execute entry point goes through this one handler (DD-001). */
  readonly execute: RequestHandler;
}

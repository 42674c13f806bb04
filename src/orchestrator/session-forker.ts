import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../blobs/blob-store.port';
import type { Caller } from '../domain/caller';
import { notFound } from '../domain/errors';
import type { SessionRecord } from '../domain/session';
import { checkForkPoint, forkName } from '../domain/session-fork';
import type { ActiveFileRef } from '../domain/turn';
import type { SessionForkStore } from '../sessions/session-forks.port';
import type { TurnStore } from '../sessions/session-store.port';
import { HISTORY_WINDOW } from './instruction-planner';
import { SessionFiles } from './turn-blobs';

export interface ForkerDeps {
  readonly sessions: Pick<TurnStore, 'getSession' | 'getTurn' | 'recentTurns'>;
  readonly forks: SessionForkStore;
  readonly blobs: BlobStore;
  readonly newId?: () => string;
}

/**
 * forkAgentSession (issue 39): a new session of the caller's, holding copies of the source's
 * turns up to and including `turnId`. The copies keep their blob URLs (the source's full texts
 * and payloads); the active-file versions a new chain may have to re-send are copied into the
 * fork's own file store first (the latest version of each path, as the planner would send it),
 * so the fork's first execute can continue `turnId`'s provider chain, or preload a new one,
 * exactly as the source could have.
 */
export class SessionForker {
  constructor(private readonly deps: ForkerDeps) {}

  async fork(caller: Caller, sessionId: string, turnId: string, name: string | null): Promise<SessionRecord> {
    const { sessions } = this.deps;
    const [source, turn] = await Promise.all([sessions.getSession(caller, sessionId), sessions.getTurn(caller, sessionId, turnId)]);
    if (!source) throw notFound('session');
    if (!turn) throw notFound('turn');
    checkForkPoint(source, turn);
    const fork = { id: (this.deps.newId ?? randomUUID)(), name: forkName(source, name), sessionId: source.id, turnId: turn.id };
    const history = await sessions.recentTurns(caller, { id: source.id, turnCount: turn.sequenceNumber }, HISTORY_WINDOW);
    await this.copyFiles(caller.orgId, source.id, fork.id, history.flatMap((t) => (t.sequenceNumber <= turn.sequenceNumber ? t.activeFileRefs : [])));
    return this.deps.forks.fork(caller, fork);
  }

  /** The newest version of each path into the fork's file store; a version the source no longer has is skipped (the planner asks for its content then). */
  private async copyFiles(orgId: string, from: string, to: string, refs: readonly ActiveFileRef[]): Promise<void> {
    const latest = new Map<string, ActiveFileRef>();
    for (const ref of refs) if (!ref.wasTooLargeToSend) latest.set(ref.path, ref);
    const source = new SessionFiles(this.deps.blobs, orgId, from);
    const target = new SessionFiles(this.deps.blobs, orgId, to);
    await Promise.all(
      [...latest.values()].map(async ({ contentHash }) => {
        const content = await source.get(contentHash);
        if (content !== null) await target.put(contentHash, content);
      }),
    );
  }
}

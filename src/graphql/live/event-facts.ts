import type { Caller, EntityHeader } from '../../domain/caller';
import type { SessionRecord } from '../../domain/session';
import { canRead } from '../../domain/visibility';
import type { SessionBatchReader } from '../../sessions/session-store.port';

/** An event of one session of one org (a status change, a text delta). */
export interface SessionEvent {
  readonly orgId: string;
  readonly sessionId: string;
}

/**
 * The event's session as the org holds it (whoever asks), read once per event for every
 * group and router that needs it: what routes the event to the groups whose filter it can
 * match (status-router.ts) and decides, per subscriber, who may have it (`mayRead`), without
 * a GraphQL execution or a read per subscriber.
 */
export interface SessionFacts {
  /** Null when the org has no such session (any more). */
  readonly session: SessionRecord | null;
  /** Owner first, then everyone who added a turn; read on first ask. */
  participants(): Promise<readonly EntityHeader[]>;
  /** Who may read the session (domain/visibility.ts); reads the participants only when that needs them. */
  readers(): Promise<(caller: Caller) => boolean>;
}

/** The org-wide reads the facts come from (services.sessionBatches). */
export type FactsReader = Pick<SessionBatchReader, 'sessionsInOrg' | 'participantsOf'>;

/** Where a live event's facts come from: read once and shared while the event is being processed (event-shares.ts). */
export interface SharedFacts {
  facts(event: SessionEvent, reads: FactsReader): Promise<SessionFacts>;
}

export async function readSessionFacts({ orgId, sessionId }: SessionEvent, reads: FactsReader): Promise<SessionFacts> {
  const scope = { orgId };
  const [session = null] = await reads.sessionsInOrg(scope, [sessionId]);
  let participants: Promise<readonly EntityHeader[]> | null = null;
  const readParticipants = () =>
    (participants ??= reads.participantsOf(scope, [sessionId]).then((byId) => byId.get(sessionId) ?? []));
  return {
    session,
    participants: readParticipants,
    async readers() {
      if (!session) return () => false;
      const access = { orgId, ownerUserId: session.ownerUser.id, isPublic: session.isPublic, isDeleted: session.isDeleted };
      // Public and not deleted: every member of the org may read it; taking part changes nothing.
      const ids = session.isPublic && !session.isDeleted ? null : new Set((await readParticipants()).map((p) => p.id));
      return (caller) => canRead(caller, access, ids?.has(caller.userId) ?? false);
    },
  };
}

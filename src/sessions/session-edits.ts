import type { Caller } from '../domain/caller';
import { conflict, forbidden } from '../domain/errors';
import type { SessionPatch, SessionRecord } from '../domain/session';
import { checkSessionPatch } from '../domain/session-rules';
import { canManage } from '../domain/visibility';
import type { Database } from '../persistence/database';
import { toSessionRecord } from './records';
import type { SessionLocks } from './session-locks';
import type { SessionCommands } from './session-store.port';
import type { SessionEntities } from './session.entities';

const DELETE_SESSION = 'UPDATE agent_sessions SET is_deleted = ?, last_updated_date = ? WHERE id = ? AND org_id = ?';
/** The columns a session patch (domain SessionChanges) may change. */
const PATCH_COLUMNS = { name: 'name', description: 'description', category: 'category', isPublic: 'is_public' } as const;

export interface SessionEditsDeps {
  readonly db: Database<SessionEntities>;
  readonly locks: SessionLocks;
  readonly now: () => Date;
}

/**
 * A session's own fields, changed by its owner or an admin: name, description, category,
 * visibility, soft delete. No turn, counter or event moves, so none of the turn lifecycle's
 * invariants is at stake; the turn lifecycle answers SessionCommands through this.
 */
export class SessionEdits implements SessionCommands {
  constructor(private readonly deps: SessionEditsDeps) {}

  async updateSession(caller: Caller, id: string, patch: SessionPatch): Promise<SessionRecord> {
    const changes = checkSessionPatch(patch);
    const { db, locks } = this.deps;
    const row = await db.sqlTransaction(async (tx) => {
      const session = await locks.visibleSession(tx, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may change a session');
      if (session.isDeleted) throw conflict('the session is deleted');
      const lastUpdatedDate = this.deps.now();
      const fields = (Object.keys(PATCH_COLUMNS) as (keyof typeof PATCH_COLUMNS)[]).filter((f) => changes[f] !== undefined);
      const set = fields.map((f) => `${PATCH_COLUMNS[f]} = ?`).join(', ');
      await tx.commitWith([
        {
          sql: `UPDATE agent_sessions SET ${set}${set ? ', ' : ''}last_updated_date = ? WHERE id = ? AND org_id = ?`,
          params: [...fields.map((f) => changes[f] ?? null), lastUpdatedDate, session.id, session.orgId],
        },
      ]);
      return { ...session, ...changes, lastUpdatedDate };
    });
    return toSessionRecord(row);
  }

  async deleteSession(caller: Caller, id: string): Promise<boolean> {
    const { db, locks } = this.deps;
    await db.sqlTransaction(async (tx) => {
      const session = await locks.visibleSession(tx, caller, id);
      if (!canManage(caller, session)) throw forbidden('only the owner or an admin may delete a session');
      if (session.isDeleted) return;
      await tx.commitWith([{ sql: DELETE_SESSION, params: [true, this.deps.now(), session.id, session.orgId] }]);
    });
    return true;
  }
}

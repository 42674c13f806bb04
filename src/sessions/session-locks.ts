import type { EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Caller, EntityHeader, OrgScope } from '../domain/caller';
import { notFound } from '../domain/errors';
import { canRead } from '../domain/visibility';
import type { Database } from '../persistence/database';
import type { SessionEntities, SessionRow, TurnRow } from './session.entities';

/**
 * Row access inside the turn lifecycle's transactions. A session or turn read here stays
 * locked until the transaction ends, so the next sequence number, a status change and the
 * session's counters cannot race (SQLite has no row locks; the database wrapper serialises
 * its transactions instead).
 */
export class SessionLocks {
  constructor(private readonly db: Database<SessionEntities>) {}

  /** The session the caller may see (NOT_FOUND otherwise), and whether the caller takes part in it. */
  async visibleSession(em: EntityManager, caller: Caller, id: string): Promise<SessionRow & { callerIsParticipant: boolean }> {
    const row = await this.session(em, caller, id);
    const callerIsParticipant = await this.isParticipant(em, row.id, caller.userId);
    if (!canRead(caller, row, callerIsParticipant)) throw notFound('session');
    return { ...row, callerIsParticipant };
  }

  session(em: EntityManager, scope: OrgScope, id: string): Promise<SessionRow> {
    const qb = em
      .createQueryBuilder(this.db.entities.sessions, 's')
      .where('s.id = :id', { id })
      .andWhere('s.orgId = :org', { org: scope.orgId });
    return this.lockedOne(qb, 'session');
  }

  turn(em: EntityManager, scope: OrgScope, sessionId: string, turnId: string): Promise<TurnRow> {
    const qb = em
      .createQueryBuilder(this.db.entities.turns, 't')
      .where('t.id = :turnId', { turnId })
      .andWhere('t.sessionId = :sessionId', { sessionId })
      .andWhere('t.orgId = :org', { org: scope.orgId });
    return this.lockedOne(qb, 'turn');
  }

  /** Only for a user who is not yet a participant; the session row is locked (or new), so this cannot race. */
  async addParticipant(em: EntityManager, session: Pick<SessionRow, 'id' | 'orgId'>, user: EntityHeader, now: Date): Promise<void> {
    await em.insert(this.db.entities.participants, {
      sessionId: session.id,
      userId: user.id,
      orgId: session.orgId,
      userName: user.text,
      joinedDate: now,
    });
  }

  /** The one row `qb` selects, locked; NOT_FOUND (as `what`) when there is none. */
  private async lockedOne<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>, what: string): Promise<T> {
    if (this.db.dialect !== 'sqlite') qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    if (!row) throw notFound(what);
    return row;
  }

  private async isParticipant(em: EntityManager, sessionId: string, userId: string): Promise<boolean> {
    const n = await em.count(this.db.entities.participants, { where: { sessionId, userId } });
    return n > 0;
  }
}

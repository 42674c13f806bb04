import type { EntityManager } from 'typeorm';
import { isAdmin, type Caller } from '../domain/caller';
import { forbidden } from '../domain/errors';
import { searchWords } from '../domain/search-words';
import type { ListPageRequest } from '../domain/pagination';
import type { SessionFilter, SessionOrder, SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import { LIMITS, optionalText } from '../domain/validation';
import type { Database } from '../persistence/database';
import type { SqlValue } from '../persistence/sql';
import { SESSION_COLUMNS, sessionRowOf, toSessionRecord, toTurnRecord, type RawSessionRow } from './records';
import { SessionList } from './session-list';
import { applyVisibility, paramsOf, visibility, whereOf } from './session-query';
import type { ListOptions, SessionPage, SessionReader } from './session-store.port';
import type { SessionEntities, SessionRow } from './session.entities';

/** DD-003 reads: one session, one turn, the last turn, and filtered, ordered lists; never more than the caller may see. */
export class SessionReads implements SessionReader {
  private readonly list: SessionList;

  constructor(private readonly db: Database<SessionEntities>) {
    this.list = new SessionList(db);
  }

  /**
   * Every execute reads its session: one plain statement with the visibility rule, mapped by
   * hand (the query builder and entity hydration cost more CPU than the database spent); a
   * batched read (Database.read), so it shares its round trip with the execute's other reads.
   */
  async getSession(caller: Caller, id: string): Promise<SessionRecord | null> {
    const conditions = [{ sql: 's.id = :sessionId', params: { sessionId: id } }, ...visibility(caller, isAdmin(caller))];
    const [text, params] = this.db.dataSource.driver.escapeQueryWithParameters(
      `SELECT ${SESSION_COLUMNS} FROM agent_sessions s WHERE ${whereOf(conditions)}`,
      paramsOf(conditions),
    );
    const rows = await this.db.read<RawSessionRow>(text, params as SqlValue[]);
    const row = rows[0];
    return row ? toSessionRecord(sessionRowOf(row)) : null;
  }

  async getTurn(caller: Caller, sessionId: string, turnId: string): Promise<TurnRecord | null> {
    const row = await this.db.run(async (em) => {
      const session = await this.visibleSessionRow(em, caller, sessionId);
      return session ? em.findOne(this.db.entities.turns, { where: { id: turnId, sessionId: session.id } }) : null;
    });
    return row ? toTurnRecord(row) : null;
  }

  async getLastTurn(caller: Caller, sessionId: string): Promise<TurnRecord | null> {
    const row = await this.db.run(async (em) => {
      const session = await this.visibleSessionRow(em, caller, sessionId);
      if (!session || session.turnCount === 0) return null;
      return em.findOne(this.db.entities.turns, { where: { sessionId: session.id, sequenceNumber: session.turnCount } });
    });
    return row ? toTurnRecord(row) : null;
  }

  listSessions(
    caller: Caller,
    filter: SessionFilter,
    order: SessionOrder,
    page: ListPageRequest,
    options: ListOptions = { withTotalCount: false },
  ): Promise<SessionPage> {
    this.assertFilter(caller, filter);
    return this.list.list(caller, filter, order, page, options);
  }

  listSessionsForUser(caller: Caller, userId: string, page: ListPageRequest, options?: ListOptions): Promise<SessionPage> {
    return this.listSessions(caller, { participantId: userId }, 'LAST_UPDATED_DESC', page, options);
  }

  assertFilter(caller: Caller, filter: SessionFilter): void {
    checkFilter(filter);
    if (filter.includeDeleted && !isAdmin(caller)) throw forbidden('includeDeleted is for organisation admins');
  }

  private async visibleSessionRow(em: EntityManager, caller: Caller, id: string): Promise<SessionRow | null> {
    const qb = em.createQueryBuilder(this.db.entities.sessions, 's').where('s.id = :id', { id });
    applyVisibility(qb, caller, isAdmin(caller));
    return qb.getOne();
  }
}

/** Over-long filter values are refused rather than silently matching nothing. */
function checkFilter(filter: SessionFilter): void {
  const ids = ['participantId', 'ownerUserId', 'agentContextId', 'conversationContextId'] as const;
  for (const field of ids) optionalText(field, filter[field], LIMITS.id);
  optionalText('workspaceId', filter.workspaceId, LIMITS.shortText);
  optionalText('repo', filter.repo, LIMITS.shortText);
  optionalText('search', filter.search, LIMITS.search);
  if (filter.search != null && filter.search !== '') searchWords(filter.search);
}

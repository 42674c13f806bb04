import { isAdmin, type Caller, type EntityHeader, type OrgScope } from '../domain/caller';
import type { ChainTurn } from '../domain/chain';
import type { SessionRecord } from '../domain/session';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import { toSessionRecord, toTurnRecord } from './records';
import { applyVisibility } from './session-query';
import { chainTurnOf, CHAIN_TURN_COLUMNS, TURN_COLUMNS, turnRowOf, type RawChainTurnRow, type RawTurnRow } from './turn-rows';
import type { ChainTurnSource, SessionBatchReader, TurnWindow } from './session-store.port';
import type { SessionEntities } from './session.entities';

/**
 * The DataLoaders' batch reads: each answers a whole batch in one statement and is scoped by
 * the org (or the caller) it is given, never by whatever the first key says.
 */
export class SessionBatchReads implements SessionBatchReader, ChainTurnSource {
  constructor(private readonly db: Database<SessionEntities>) {}

  async sessionsByIds(caller: Caller, ids: readonly string[]): Promise<SessionRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.run((em) => {
      const qb = em.createQueryBuilder(this.db.entities.sessions, 's');
      applyVisibility(qb, caller, isAdmin(caller));
      return qb.andWhere('s.id IN (:...ids)', { ids: [...ids] }).getMany();
    });
    return rows.map(toSessionRecord);
  }

  async sessionsInOrg(scope: OrgScope, ids: readonly string[]): Promise<SessionRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.sessions, 's')
        .where('s.orgId = :org', { org: scope.orgId })
        .andWhere('s.id IN (:...ids)', { ids: [...ids] })
        .getMany(),
    );
    return rows.map(toSessionRecord);
  }

  /** Per-event loaders of subscriptions read turns this way. */
  async turnsByIds(caller: Caller, ids: readonly string[]): Promise<TurnRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.run((em) => {
      const visible = em.createQueryBuilder(this.db.entities.sessions, 's').select('s.id');
      applyVisibility(visible, caller, isAdmin(caller));
      return em
        .createQueryBuilder(this.db.entities.turns, 't')
        .where('t.orgId = :turnOrg', { turnOrg: caller.orgId })
        .andWhere('t.id IN (:...turnIds)', { turnIds: [...ids] })
        .andWhere(`t.sessionId IN (${visible.getQuery()})`)
        .setParameters(visible.getParameters())
        .getMany();
    });
    return rows.map(toTurnRecord);
  }

  async lastTurnsOf(scope: OrgScope, sessions: readonly Pick<SessionRecord, 'id' | 'turnCount'>[]): Promise<TurnRecord[]> {
    const withTurns = sessions.filter((s) => s.turnCount > 0);
    if (withTurns.length === 0) return [];
    const params: Record<string, string | number> = {};
    const pairs = withTurns.map((s, i) => {
      params[`s${i}`] = s.id;
      params[`n${i}`] = s.turnCount;
      return `(t.sessionId = :s${i} AND t.sequenceNumber = :n${i})`;
    });
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.turns, 't')
        .where('t.orgId = :org', { org: scope.orgId })
        .andWhere(`(${pairs.join(' OR ')})`, params)
        .getMany(),
    );
    return rows.map(toTurnRecord);
  }

  async participantsOf(scope: OrgScope, sessionIds: readonly string[]): Promise<Map<string, EntityHeader[]>> {
    const result = new Map<string, EntityHeader[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return result;
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.participants, 'p')
        .where('p.orgId = :org', { org: scope.orgId })
        .andWhere('p.sessionId IN (:...ids)', { ids: [...sessionIds] })
        // The owner first even when someone joined in the same millisecond, then in joining order.
        .innerJoin(this.db.entities.sessions.options.name, 's', 's.id = p.sessionId')
        .orderBy('CASE WHEN p.user_id = s.owner_user_id THEN 0 ELSE 1 END', 'ASC')
        .addOrderBy('p.joinedDate', 'ASC')
        .addOrderBy('p.userId', 'ASC')
        .getMany(),
    );
    for (const row of rows) result.get(row.sessionId)?.push({ id: row.userId, text: row.userName });
    return result;
  }

  /**
   * Each session's turns after `window.afterSequence`, at most `window.limit` of them, oldest
   * first, as plain rows (turn-rows.ts). One session (every execute reads its own): an index
   * range with LIMIT; several: the first `limit` of each by ROW_NUMBER.
   */
  async turnsOf(scope: OrgScope, sessionIds: readonly string[], window: TurnWindow): Promise<Map<string, TurnRecord[]>> {
    const result = new Map<string, TurnRecord[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return result;
    const status = (alias: string) => (window.status ? ` AND ${alias}.status = ?` : '');
    const statusParams = window.status ? [window.status] : [];
    const [only] = sessionIds;
    const rows = await this.db.run((em) =>
      sessionIds.length === 1
        ? em.query<RawTurnRow[]>(
            `SELECT ${TURN_COLUMNS} FROM agent_session_turns t
              WHERE t.org_id = ? AND t.session_id = ? AND t.sequence_number > ?${status('t')}
              ORDER BY t.sequence_number ASC LIMIT ?`,
            [scope.orgId, only, window.afterSequence, ...statusParams, window.limit],
          )
        : em.query<RawTurnRow[]>(
            `SELECT ${TURN_COLUMNS} FROM agent_session_turns t
              INNER JOIN (SELECT r.id, ROW_NUMBER() OVER (PARTITION BY r.session_id ORDER BY r.sequence_number) AS rn
                FROM agent_session_turns r
                WHERE r.org_id = ? AND r.session_id IN (${sessionIds.map(() => '?').join(', ')}) AND r.sequence_number > ?${status('r')}) w
                ON w.id = t.id AND w.rn <= ?
              ORDER BY t.sequence_number ASC`,
            [scope.orgId, ...sessionIds, window.afterSequence, ...statusParams, window.limit],
          ),
    );
    for (const row of rows) result.get(row.session_id)?.push(toTurnRecord(turnRowOf(row)));
    return result;
  }

  /**
   * The planner's read, every execute (through chain-history-cache.ts, which asks only for the
   * turns after those it holds): the chain and file fields of the session's newest `limit`
   * turns after `afterSequence`, one index range read backwards. It needs nothing from the
   * session row, so it is read alongside it (a batched read, Database.read: one round trip for both).
   */
  async chainTurnsAfter(scope: OrgScope, sessionId: string, afterSequence: number, limit: number): Promise<ChainTurn[]> {
    const rows = await this.db.read<RawChainTurnRow>(
      `SELECT ${CHAIN_TURN_COLUMNS} FROM agent_session_turns t
        WHERE t.org_id = ? AND t.session_id = ? AND t.sequence_number > ?
        ORDER BY t.sequence_number DESC LIMIT ?`,
      [scope.orgId, sessionId, afterSequence, limit],
    );
    return rows.reverse().map(chainTurnOf);
  }

  async countTurns(scope: OrgScope, sessionIds: readonly string[], status: TurnStatus): Promise<Map<string, number>> {
    const result = new Map<string, number>(sessionIds.map((id) => [id, 0]));
    if (sessionIds.length === 0) return result;
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.turns, 't')
        .select('t.sessionId', 'sessionId')
        .addSelect('COUNT(*)', 'n')
        .where('t.orgId = :org', { org: scope.orgId })
        .andWhere('t.sessionId IN (:...ids)', { ids: [...sessionIds] })
        .andWhere('t.status = :status', { status })
        .groupBy('t.sessionId')
        .getRawMany<{ sessionId: string; n: string | number }>(),
    );
    for (const row of rows) result.set(row.sessionId, Number(row.n));
    return result;
  }
}

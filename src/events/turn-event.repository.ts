import { DomainError } from '../domain/errors';
import type { Database } from '../persistence/database';
import type { EventLogEntities, TurnEventRow } from './event-log.entities';
import type { TurnStatusEvent } from './turn-events';

/** Which stored events a replay reads: one org, optionally one session. */
export interface EventScope {
  readonly orgId: string;
  readonly sessionId?: string;
}

/** The stored events as live subscriptions read them: replay and resume checks, never pruning. */
export interface TurnEventHistory {
  latestId(orgId: string): Promise<number>;
  horizon(orgId: string): Promise<number>;
  after(scope: EventScope, afterId: number, limit: number): Promise<TurnStatusEvent[]>;
  assertResumable(orgId: string, afterId: number): Promise<void>;
}

/** An org's sequence as stored: its counter row, or where an org without one starts. */
const ORG_SEQUENCE = `SELECT
  COALESCE((SELECT last_id FROM org_event_counters WHERE org_id = ?), (SELECT value FROM event_counters WHERE name = 'turn_events')) AS last_id,
  COALESCE((SELECT pruned_id FROM org_event_counters WHERE org_id = ?), (SELECT value FROM event_counters WHERE name = 'turn_events_pruned')) AS pruned_id`;

/**
 * Reads the durable status events the event-log writer stores (turn_events) for replay and
 * gap filling, and prunes old ones. Ids are per org (see event-log-writer.ts): every read
 * names its org.
 */
export class TurnEventRepository implements TurnEventHistory {
  /** `deleteWindow`: events per DELETE statement when pruning. */
  constructor(
    private readonly db: Database<EventLogEntities>,
    private readonly deleteWindow = 5_000,
  ) {}

  /** The highest event id handed out in the org so far (committed or about to be). */
  async latestId(orgId: string): Promise<number> {
    return (await this.sequence(orgId)).lastId;
  }

  /** The org's events up to this id may have been pruned; a resume must start at or after it. */
  async horizon(orgId: string): Promise<number> {
    return (await this.sequence(orgId)).prunedId;
  }

  /**
   * The highest id handed out so far in each org that has events of its own sequence (a row in
   * org_event_counters); `orgIds` limits it to those orgs. `floor` is where the others stand.
   */
  async latestIds(orgIds?: readonly string[]): Promise<{ byOrg: Map<string, number>; floor: number }> {
    if (orgIds?.length === 0) return { byOrg: new Map(), floor: await this.floor() };
    const where = orgIds ? ` WHERE org_id IN (${orgIds.map(() => '?').join(', ')})` : '';
    const [rows, floor] = await Promise.all([
      this.db.run((em) => em.query<{ org_id: string; last_id: string | number }[]>(`SELECT org_id, last_id FROM org_event_counters${where}`, orgIds ? [...orgIds] : [])),
      this.floor(),
    ]);
    return { byOrg: new Map(rows.map((r) => [r.org_id, Number(r.last_id)])), floor };
  }

  /** Events of `scope` with ids after `afterId`, oldest first, at most `limit`. */
  async after(scope: EventScope, afterId: number, limit: number): Promise<TurnStatusEvent[]> {
    const rows = await this.db.run((em) => {
      const qb = em
        .createQueryBuilder(this.db.entities.events, 'e')
        .where('e.orgId = :org', { org: scope.orgId })
        .andWhere('e.id > :after', { after: afterId });
      if (scope.sessionId !== undefined) qb.andWhere('e.sessionId = :session', { session: scope.sessionId });
      return qb.orderBy('e.id', 'ASC').take(limit).getMany();
    });
    return rows.map(toEvent);
  }

  /** The org's events with afterId < id <= throughId, oldest first, at most `limit`. */
  async range(orgId: string, afterId: number, throughId: number, limit: number): Promise<TurnStatusEvent[]> {
    const rows = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.events, 'e')
        .where('e.orgId = :org', { org: orgId })
        .andWhere('e.id > :after', { after: afterId })
        .andWhere('e.id <= :through', { through: throughId })
        .orderBy('e.id', 'ASC')
        .take(limit)
        .getMany(),
    );
    return rows.map(toEvent);
  }

  /**
   * Throws EVENTS_PRUNED unless every event of the org after `afterId` is still stored, and
   * BAD_USER_INPUT for an id the org was never handed.
   */
  async assertResumable(orgId: string, afterId: number): Promise<void> {
    const { lastId, prunedId } = await this.sequence(orgId);
    if (afterId < prunedId) {
      throw new DomainError('EVENTS_PRUNED', `events up to ${prunedId} are no longer stored; reload the current state and subscribe without afterEventId`, {
        afterEventId: String(afterId),
        oldestResumableEventId: String(prunedId),
      });
    }
    if (afterId > lastId) throw new DomainError('BAD_USER_INPUT', 'afterEventId is not an event id of your organisation', { argument: 'afterEventId' });
  }

  /**
   * Deletes events recorded before `cutoff`, org by org. Safe when several instances run it at
   * once: an org's horizon moves first (one statement on its counter row, never backwards), so
   * a resume that might need a deleted event is refused before the event is gone; deleting is
   * idempotent.
   */
  async prune(cutoff: Date): Promise<{ orgs: number; deleted: number }> {
    const candidates = await this.db.run((em) =>
      em
        .createQueryBuilder(this.db.entities.events, 'e')
        .select('e.orgId', 'orgId')
        .addSelect('MAX(e.id)', 'maxId')
        .where('e.recordedDate < :cutoff', { cutoff })
        .groupBy('e.orgId')
        .getRawMany<{ orgId: string; maxId: string | number }>(),
    );
    let deleted = 0;
    for (const { orgId, maxId } of candidates) {
      await this.db.run((em) => em.query(this.moveHorizon, [orgId, Number(maxId)]));
      deleted += await this.deleteThrough(orgId, await this.horizon(orgId));
    }
    return { orgs: candidates.length, deleted };
  }

  /** Deletes the org's events up to `horizon`, `deleteWindow` at a time, so each statement (and its locks) stays short. */
  private async deleteThrough(orgId: string, horizon: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const [end] = await this.db.run((em) =>
        em.query<{ id: string | number }[]>('SELECT id FROM turn_events WHERE org_id = ? AND id <= ? ORDER BY id LIMIT 1 OFFSET ?', [
          orgId,
          horizon,
          this.deleteWindow - 1,
        ]),
      );
      const to = end ? Number(end.id) : horizon;
      const result = await this.db.run((em) =>
        em.createQueryBuilder().delete().from(this.db.entities.events).where('orgId = :org AND id <= :to', { org: orgId, to }).execute(),
      );
      deleted += result.affected ?? 0;
      if (!end) return deleted;
    }
  }

  /** Raises the org's horizon to the given id (never lowers it), making its counter row if it has none. */
  private get moveHorizon(): string {
    return this.db.dialect === 'sqlite'
      ? `INSERT INTO org_event_counters (org_id, last_id, pruned_id) VALUES (?, (SELECT value FROM event_counters WHERE name = 'turn_events'), ?)
  ON CONFLICT (org_id) DO UPDATE SET pruned_id = MAX(pruned_id, excluded.pruned_id)`
      : `INSERT INTO org_event_counters (org_id, last_id, pruned_id) VALUES (?, (SELECT value FROM event_counters WHERE name = 'turn_events'), ?)
  ON DUPLICATE KEY UPDATE pruned_id = GREATEST(pruned_id, VALUES(pruned_id))`;
  }

  private async sequence(orgId: string): Promise<{ lastId: number; prunedId: number }> {
    const [row] = await this.db.run((em) =>
      em.query<{ last_id: string | number | null; pruned_id: string | number | null }[]>(ORG_SEQUENCE, [orgId, orgId]),
    );
    if (row?.last_id == null || row.pruned_id == null) throw new Error('event_counters has no "turn_events" rows; are the migrations up to date?');
    return { lastId: Number(row.last_id), prunedId: Number(row.pruned_id) };
  }

  private async floor(): Promise<number> {
    const [row] = await this.db.run((em) => em.query<{ value: string | number }[]>(`SELECT value FROM event_counters WHERE name = 'turn_events'`));
    if (!row) throw new Error('event_counters has no "turn_events" row; are the migrations up to date?');
    return Number(row.value);
  }
}

function toEvent(row: TurnEventRow): TurnStatusEvent {
  return {
    eventId: row.id,
    orgId: row.orgId,
    sessionId: row.sessionId,
    turnId: row.turnId,
    sequenceNumber: row.sequenceNumber,
    previousStatus: row.previousStatus,
    status: row.status,
    statusTimeStamp: row.statusTimeStamp,
    createdByUser: { id: row.createdByUserId, text: row.createdByUserName },
  };
}

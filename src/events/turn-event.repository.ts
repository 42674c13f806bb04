import type { EntityManager } from 'typeorm';
import { DomainError } from '../domain/errors';
import type { Database } from '../persistence/database';
import type { EventLogEntities, TurnEventRow } from './event-log.entities';
import type { TurnStatusEvent } from './turn-events';

/** Which stored events a replay reads: one org, optionally one session. */
export interface EventScope {
  readonly orgId: string;
  readonly sessionId?: string;
}

const ISSUED = 'turn_events';
/** event_counters row holding the highest id already pruned (migration 1764300000000). */
const PRUNED = 'turn_events_pruned';

/** The stored events as live subscriptions read them: replay and resume checks, never pruning. */
export interface TurnEventHistory {
  latestId(): Promise<number>;
  horizon(): Promise<number>;
  after(scope: EventScope, afterId: number, limit: number): Promise<TurnStatusEvent[]>;
  assertResumable(afterId: number): Promise<void>;
}

/**
 * Reads the durable status events the event-log writer stores (turn_events) for replay and
 * gap filling, and prunes old ones.
 */
export class TurnEventRepository implements TurnEventHistory {
  /** `deleteWindow`: ids per DELETE statement when pruning. */
  constructor(
    private readonly db: Database<EventLogEntities>,
    private readonly deleteWindow = 5_000,
  ) {}

  /** The highest event id handed out so far (committed or about to be). */
  latestId(): Promise<number> {
    return this.counter(this.db.dataSource.manager, ISSUED);
  }

  /** Events up to this id may have been pruned; a resume must start at or after it. */
  horizon(): Promise<number> {
    return this.counter(this.db.dataSource.manager, PRUNED);
  }

  /** Events of `scope` with ids after `afterId`, oldest first, at most `limit`. */
  async after(scope: EventScope, afterId: number, limit: number): Promise<TurnStatusEvent[]> {
    const qb = this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.events, 'e')
      .where('e.orgId = :org', { org: scope.orgId })
      .andWhere('e.id > :after', { after: afterId });
    if (scope.sessionId !== undefined) qb.andWhere('e.sessionId = :session', { session: scope.sessionId });
    const rows = await qb.orderBy('e.id', 'ASC').take(limit).getMany();
    return rows.map(toEvent);
  }

  /** Every event with afterId < id <= throughId (any org), oldest first, at most `limit`. */
  async range(afterId: number, throughId: number, limit: number): Promise<TurnStatusEvent[]> {
    const rows = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.events, 'e')
      .where('e.id > :after', { after: afterId })
      .andWhere('e.id <= :through', { through: throughId })
      .orderBy('e.id', 'ASC')
      .take(limit)
      .getMany();
    return rows.map(toEvent);
  }

  /**
   * Throws EVENTS_PRUNED unless every event after `afterId` is still stored, and
   * BAD_USER_INPUT for an id that was never handed out.
   */
  async assertResumable(afterId: number): Promise<void> {
    const [horizon, latest] = await Promise.all([this.horizon(), this.latestId()]);
    if (afterId < horizon) {
      throw new DomainError('EVENTS_PRUNED', `events up to ${horizon} are no longer stored; reload the current state and subscribe without afterEventId`, {
        afterEventId: String(afterId),
        oldestResumableEventId: String(horizon),
      });
    }
    if (afterId > latest) throw new DomainError('BAD_USER_INPUT', 'afterEventId is not an event id of this deployment', { argument: 'afterEventId' });
  }

  /**
   * Deletes events recorded before `cutoff`. Safe when several instances run it at once:
   * the horizon moves first, under a lock on its counter row, so a resume that might need a
   * deleted event is refused before the event is gone; deleting is idempotent.
   */
  async prune(cutoff: Date): Promise<{ horizon: number; deleted: number }> {
    const horizon = await this.db.transaction(async (em) => {
      const current = await this.counter(em, PRUNED, true);
      const [row] = await em
        .createQueryBuilder(this.db.entities.events, 'e')
        .select('MAX(e.id)', 'maxId')
        .where('e.recordedDate < :cutoff', { cutoff })
        .getRawMany<{ maxId: string | number | null }>();
      const candidate = row?.maxId == null ? 0 : Number(row.maxId);
      if (candidate <= current) return current;
      await em.query('UPDATE event_counters SET value = ? WHERE name = ?', [candidate, PRUNED]);
      return candidate;
    });
    let deleted = 0;
    const [oldest] = await this.db.dataSource.manager
      .createQueryBuilder(this.db.entities.events, 'e')
      .select('MIN(e.id)', 'minId')
      .getRawMany<{ minId: string | number | null }>();
    // Windows of ids keep each statement (and its locks) short; ids are dense.
    for (let from = oldest?.minId == null ? horizon : Number(oldest.minId) - 1; from < horizon; from += this.deleteWindow) {
      const result = await this.db.dataSource.manager
        .createQueryBuilder()
        .delete()
        .from(this.db.entities.events)
        .where('id > :from AND id <= :to', { from, to: Math.min(horizon, from + this.deleteWindow) })
        .execute();
      deleted += result.affected ?? 0;
    }
    return { horizon, deleted };
  }

  private async counter(em: EntityManager, name: string, lock = false): Promise<number> {
    const forUpdate = lock && this.db.dialect !== 'sqlite' ? ' FOR UPDATE' : '';
    const [row] = await em.query<{
      value: string | number;
    }[]>(`SELECT value FROM event_counters WHERE name = ?${forUpdate}`, [name]);
    if (!row) throw new Error(`event_counters has no "${name}" row; are the migrations up to date?`);
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

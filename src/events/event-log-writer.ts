import type { EntityManager } from 'typeorm';
import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import type { EventLogEntities } from './event-log.entities';
import type { TurnStatusEvent } from './turn-events';

/**
 * The only writer of turn_events. The turn lifecycle calls it inside the transaction that
 * changes the turn, so the event commits (or rolls back) with the change. Ids come from one
 * counter row whose lock is held until commit, so ids are handed out in commit order: a
 * reader that has seen event N can never later find a committed event below N.
 */
export class EventLogWriter {
  constructor(
    private readonly db: Database<EventLogEntities>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records that `turn` now has its status, coming from `previousStatus` (null: the turn is new). */
  async append(
    em: EntityManager,
    turn: Pick<TurnRecord, 'id' | 'orgId' | 'sessionId' | 'sequenceNumber' | 'status' | 'statusTimeStamp' | 'createdByUser'>,
    previousStatus: TurnStatus | null,
  ): Promise<TurnStatusEvent> {
    const event: TurnStatusEvent = {
      eventId: await this.nextId(em),
      orgId: turn.orgId,
      sessionId: turn.sessionId,
      turnId: turn.id,
      sequenceNumber: turn.sequenceNumber,
      previousStatus,
      status: turn.status,
      statusTimeStamp: turn.statusTimeStamp,
      createdByUser: turn.createdByUser,
    };
    await em.insert(this.db.entities.events, {
      id: event.eventId,
      orgId: event.orgId,
      sessionId: event.sessionId,
      turnId: event.turnId,
      sequenceNumber: event.sequenceNumber,
      previousStatus: event.previousStatus,
      status: event.status,
      statusTimeStamp: event.statusTimeStamp,
      createdByUserId: event.createdByUser.id,
      createdByUserName: event.createdByUser.text,
      recordedDate: this.now(),
    });
    return event;
  }

  /**
   * Takes the next id, locking the counter row until commit. Every turn change of every session
   * passes this one row, so the lock is held for as few round trips as possible: on MySQL the
   * UPDATE hands the new value back itself (LAST_INSERT_ID(expr) comes back as the insert id),
   * which spares a SELECT while the lock is held; on SQLite (which runs its transactions one
   * at a time) UPDATE ... RETURNING does the same.
   */
  private async nextId(em: EntityManager): Promise<number> {
    if (this.db.dialect !== 'sqlite') {
      const result = (await em.query(`UPDATE event_counters SET value = LAST_INSERT_ID(value + 1) WHERE name = 'turn_events'`)) as {
        insertId: number | string;
      };
      return Number(result.insertId);
    }
    const [counter] = (await em.query(`UPDATE event_counters SET value = value + 1 WHERE name = 'turn_events' RETURNING value`)) as {
      value: string | number;
    }[];
    return Number(counter?.value);
  }
}

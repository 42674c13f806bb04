import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Database, Sql } from '../persistence/database';
import type { TurnStatusEvent } from './turn-events';

const INSERT_EVENT = `INSERT INTO turn_events (id, org_id, session_id, turn_id, sequence_number, previous_status, status,
  status_time_stamp, created_by_user_id, created_by_user_name, recorded_date) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * The only writer of turn_events. The turn lifecycle calls it inside the transaction that
 * changes the turn, so the event commits (or rolls back) with the change. Ids come from one
 * counter row whose lock is held until commit, so ids are handed out in commit order: a
 * reader that has seen event N can never later find a committed event below N.
 */
export class EventLogWriter {
  constructor(
    private readonly db: Pick<Database, 'dialect'>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records that `turn` now has its status, coming from `previousStatus` (null: the turn is new). */
  async append(
    sql: Sql,
    turn: Pick<TurnRecord, 'id' | 'orgId' | 'sessionId' | 'sequenceNumber' | 'status' | 'statusTimeStamp' | 'createdByUser'>,
    previousStatus: TurnStatus | null,
  ): Promise<TurnStatusEvent> {
    const event: TurnStatusEvent = {
      eventId: await this.nextId(sql),
      orgId: turn.orgId,
      sessionId: turn.sessionId,
      turnId: turn.id,
      sequenceNumber: turn.sequenceNumber,
      previousStatus,
      status: turn.status,
      statusTimeStamp: turn.statusTimeStamp,
      createdByUser: turn.createdByUser,
    };
    await sql.run(INSERT_EVENT, [
      event.eventId,
      event.orgId,
      event.sessionId,
      event.turnId,
      event.sequenceNumber,
      event.previousStatus,
      event.status,
      event.statusTimeStamp,
      event.createdByUser.id,
      event.createdByUser.text,
      this.now(),
    ]);
    return event;
  }

  /**
   * Takes the next id, locking the counter row until commit. Every turn change of every session
   * passes this one row, so the lock is held for as few round trips as possible: on MySQL the
   * UPDATE hands the new value back itself (LAST_INSERT_ID(expr) comes back as the insert id),
   * which spares a SELECT while the lock is held; on SQLite (which runs its transactions one
   * at a time) UPDATE ... RETURNING does the same.
   */
  private async nextId(sql: Sql): Promise<number> {
    if (this.db.dialect !== 'sqlite') {
      return (await sql.run(`UPDATE event_counters SET value = LAST_INSERT_ID(value + 1) WHERE name = 'turn_events'`)).insertId;
    }
    const [counter] = await sql.rows<{ value: string | number }>(`UPDATE event_counters SET value = value + 1 WHERE name = 'turn_events' RETURNING value`);
    return Number(counter?.value);
  }
}

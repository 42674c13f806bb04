import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import type { SqlResult, Statement } from '../persistence/sql';
import type { Dialect } from '../persistence/dialect';
import type { TurnStatusEvent } from './turn-events';

const EVENT_COLUMNS = `org_id, session_id, turn_id, sequence_number, previous_status, status, status_time_stamp,
  created_by_user_id, created_by_user_name, recorded_date`;

/**
 * The two statements that take the next event id and store the event, per dialect. The id
 * never travels back to the gateway between them: MySQL's UPDATE leaves it in LAST_INSERT_ID()
 * (and hands it back as the insert id), SQLite's hands it back with RETURNING and the INSERT
 * reads the counter row it just wrote.
 */
function statementsFor(dialect: Dialect) {
  if (dialect === 'sqlite') {
    return {
      nextId: `UPDATE event_counters SET value = value + 1 WHERE name = 'turn_events' RETURNING value`,
      insert: `INSERT INTO turn_events (id, ${EVENT_COLUMNS})
  VALUES ((SELECT value FROM event_counters WHERE name = 'turn_events'), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      idOf: (result: SqlResult | undefined) => Number((result?.rows[0] as { value: number | string } | undefined)?.value),
    };
  }
  return {
    nextId: `UPDATE event_counters SET value = LAST_INSERT_ID(value + 1) WHERE name = 'turn_events'`,
    insert: `INSERT INTO turn_events (id, ${EVENT_COLUMNS}) VALUES (LAST_INSERT_ID(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    idOf: (result: SqlResult | undefined) => Number(result?.insertId),
  };
}

/** A status event about to be stored: its statements, and the event once they have run. */
export interface EventAppend {
  readonly statements: readonly Statement[];
  /** The event, from the results of `statements` (in their order). */
  event(results: readonly SqlResult[]): TurnStatusEvent;
}

/**
 * The only writer of turn_events. The turn lifecycle runs its statements inside the
 * transaction that changes the turn, so the event commits (or rolls back) with the change.
 * Ids come from one counter row whose lock is held until commit, so ids are handed out in
 * commit order: a reader that has seen event N can never later find a committed event below N.
 * Every turn change of every session passes that row, so the lifecycle runs these statements
 * last, with the COMMIT (SqlTransaction.commitWith): on MySQL the lock is then taken and
 * released within one round trip.
 */
export class EventLogWriter {
  private readonly statements: ReturnType<typeof statementsFor>;

  constructor(
    db: Pick<Database, 'dialect'>,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.statements = statementsFor(db.dialect);
  }

  /** Records that `turn` now has its status, coming from `previousStatus` (null: the turn is new). */
  append(
    turn: Pick<TurnRecord, 'id' | 'orgId' | 'sessionId' | 'sequenceNumber' | 'status' | 'statusTimeStamp' | 'createdByUser'>,
    previousStatus: TurnStatus | null,
  ): EventAppend {
    const { nextId, insert, idOf } = this.statements;
    const params = [
      turn.orgId,
      turn.sessionId,
      turn.id,
      turn.sequenceNumber,
      previousStatus,
      turn.status,
      turn.statusTimeStamp,
      turn.createdByUser.id,
      turn.createdByUser.text,
      this.now(),
    ];
    return {
      statements: [
        { sql: nextId, params: [] },
        { sql: insert, params },
      ],
      event: (results) => ({
        eventId: idOf(results[0]),
        orgId: turn.orgId,
        sessionId: turn.sessionId,
        turnId: turn.id,
        sequenceNumber: turn.sequenceNumber,
        previousStatus,
        status: turn.status,
        statusTimeStamp: turn.statusTimeStamp,
        createdByUser: turn.createdByUser,
      }),
    };
  }
}

import type { TurnRecord } from '../domain/turn';
import type { TurnStatus } from '../domain/turn-status';
import type { Database } from '../persistence/database';
import type { SqlResult, SqlValue, Statement } from '../persistence/sql';
import type { Dialect } from '../persistence/dialect';
import type { TurnStatusEvent } from './turn-events';

const EVENT_COLUMNS = `org_id, session_id, turn_id, sequence_number, previous_status, status, status_time_stamp,
  created_by_user_id, created_by_user_name, recorded_date`;

/** Where an org without a counter row starts: the frozen deployment-wide sequence (migration 1765200000000). */
const FLOOR = `(SELECT value FROM event_counters WHERE name = 'turn_events')`;
const PRUNED_FLOOR = `(SELECT value FROM event_counters WHERE name = 'turn_events_pruned')`;

/**
 * The two statements that take the org's next event id and store the event, per dialect. The
 * first makes the org's counter row on its first event. The id never travels back to the
 * gateway between them: MySQL's upsert leaves it in LAST_INSERT_ID() (and hands it back as the
 * insert id), SQLite's hands it back with RETURNING and the INSERT reads the row it just wrote.
 */
function statementsFor(dialect: Dialect) {
  if (dialect === 'sqlite') {
    return {
      nextId: `INSERT INTO org_event_counters (org_id, last_id, pruned_id) VALUES (?, ${FLOOR} + 1, ${PRUNED_FLOOR})
  ON CONFLICT (org_id) DO UPDATE SET last_id = last_id + 1 RETURNING last_id`,
      insert: `INSERT INTO turn_events (id, ${EVENT_COLUMNS})
  VALUES ((SELECT last_id FROM org_event_counters WHERE org_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      insertParams: (orgId: string, params: readonly SqlValue[]) => [orgId, ...params],
      idOf: (result: SqlResult | undefined) => Number((result?.rows[0] as { last_id: number | string } | undefined)?.last_id),
    };
  }
  return {
    nextId: `INSERT INTO org_event_counters (org_id, last_id, pruned_id) VALUES (?, LAST_INSERT_ID(${FLOOR} + 1), ${PRUNED_FLOOR})
  ON DUPLICATE KEY UPDATE last_id = LAST_INSERT_ID(last_id + 1)`,
    insert: `INSERT INTO turn_events (id, ${EVENT_COLUMNS}) VALUES (LAST_INSERT_ID(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    insertParams: (_orgId: string, params: readonly SqlValue[]) => [...params],
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
 * Ids come from the org's counter row, whose lock is held until commit, so each org's ids are
 * handed out in commit order: a reader that has seen the org's event N can never later find a
 * committed event of that org below N. Orgs share no row, so one org's turns never wait on
 * another's. Every turn change of an org passes its row, so the lifecycle runs these
 * statements last, with the COMMIT (SqlTransaction.commitWith): on MySQL the lock is then
 * taken and released within one round trip.
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
    const { nextId, insert, insertParams, idOf } = this.statements;
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
        { sql: nextId, params: [turn.orgId] },
        { sql: insert, params: insertParams(turn.orgId, params) },
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

import { EntitySchema } from 'typeorm';
import type { TurnStatus } from '../domain/turn-status';
import { bigintNumber } from '../persistence/columns';
import { columnTypes, type Dialect } from '../persistence/dialect';

/** One durable status-change event; ids are handed out in commit order (see event_counters). */
export interface TurnEventRow {
  id: number;
  orgId: string;
  sessionId: string;
  turnId: string;
  sequenceNumber: number;
  previousStatus: TurnStatus | null;
  status: TurnStatus;
  statusTimeStamp: Date;
  createdByUserId: string;
  createdByUserName: string;
  recordedDate: Date;
}

/** Named counters: the last event id handed out, and the highest id already pruned. */
export interface EventCounterRow {
  name: string;
  value: number;
}

/** The event log's tables: turn_events and event_counters (written by the event-log writer only). */
export function eventLogEntities(dialect: Dialect) {
  const t = columnTypes(dialect);
  const varchar = (length: number, nullable = false) => ({ type: 'varchar' as const, length, nullable });
  /** An id column: compared byte for byte (see ColumnTypes.exactId). */
  const id = (length: number) => ({ ...varchar(length), ...t.exactId });
  const date = (name: string) => ({ ...t.datetime, name, nullable: false });

  const events = new EntitySchema<TurnEventRow>({
    name: 'TurnEvent',
    tableName: 'turn_events',
    columns: {
      id: { type: 'bigint', primary: true, transformer: bigintNumber },
      orgId: { ...id(64), name: 'org_id' },
      sessionId: { ...id(36), name: 'session_id' },
      turnId: { ...id(36), name: 'turn_id' },
      sequenceNumber: { type: 'int', name: 'sequence_number' },
      previousStatus: { ...varchar(16, true), name: 'previous_status' },
      status: varchar(16),
      statusTimeStamp: date('status_time_stamp'),
      createdByUserId: { ...id(64), name: 'created_by_user_id' },
      createdByUserName: { ...varchar(200), name: 'created_by_user_name' },
      recordedDate: date('recorded_date'),
    },
    indices: [
      { name: 'idx_events_org_id', columns: ['orgId', 'id'] },
      { name: 'idx_events_session_id', columns: ['sessionId', 'id'] },
      { name: 'idx_events_recorded', columns: ['recordedDate'] },
    ],
  });

  const counters = new EntitySchema<EventCounterRow>({
    name: 'EventCounter',
    tableName: 'event_counters',
    columns: {
      name: { ...varchar(32), primary: true },
      value: { type: 'bigint', transformer: bigintNumber },
    },
  });

  return { events, counters };
}

export type EventLogEntities = ReturnType<typeof eventLogEntities>;

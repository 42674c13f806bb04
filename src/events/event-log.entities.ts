import { EntitySchema } from 'typeorm';
import type { TurnStatus } from '../domain/turn-status';
import { bigintNumber } from '../persistence/columns';
import { columnTypes, type Dialect } from '../persistence/dialect';

/** One durable status-change event; ids are per org, handed out in commit order (see org_event_counters). */
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

/**
 * Named counters, frozen since event ids became per org (migration 1765200000000): the last
 * id and the pruning horizon of the one deployment-wide sequence before. They are where an
 * org without an org_event_counters row starts, so an id handed out before stays valid.
 */
export interface EventCounterRow {
  name: string;
  value: number;
}

/** One org's event sequence: the last id handed out, and the highest id that may be pruned. */
export interface OrgEventCounterRow {
  orgId: string;
  lastId: number;
  prunedId: number;
}

/** The event log's tables: turn_events and its counters (written by the event-log writer and the pruner only). */
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
      orgId: { ...id(64), name: 'org_id', primary: true },
      id: { type: 'bigint', primary: true, transformer: bigintNumber },
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

  const orgCounters = new EntitySchema<OrgEventCounterRow>({
    name: 'OrgEventCounter',
    tableName: 'org_event_counters',
    columns: {
      orgId: { ...id(64), name: 'org_id', primary: true },
      lastId: { type: 'bigint', name: 'last_id', transformer: bigintNumber },
      prunedId: { type: 'bigint', name: 'pruned_id', transformer: bigintNumber },
    },
  });

  return { events, counters, orgCounters };
}

export type EventLogEntities = ReturnType<typeof eventLogEntities>;

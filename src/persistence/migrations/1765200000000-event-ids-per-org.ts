import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

const SECONDARY_INDEXES = [
  new TableIndex({ name: 'idx_events_session_id', columnNames: ['session_id', 'id'] }),
  new TableIndex({ name: 'idx_events_recorded', columnNames: ['recorded_date'] }),
];

/**
 * Issue 35: status-event ids come from one sequence per org (org_event_counters) instead of
 * the one event_counters row every turn change of every org locked until commit. turn_events
 * is keyed by (org_id, id).
 *
 * Existing events keep their ids, and event_counters keeps the old sequence's last id and
 * pruning horizon, frozen: an org's sequence starts from them (its row is made by its first
 * event), so every id a client was handed before (latestEventId was deployment-wide) is still
 * a valid resume point in its org, and ids stay increasing per org. No row is written per org
 * here, so the migration costs one table rebuild of turn_events (online on MariaDB/MySQL:
 * ALGORITHM=INPLACE, LOCK=NONE; SQLite copies the table).
 *
 * `down` gives the events back one deployment-wide sequence (renumberAcrossOrgs): the old key
 * holds one event per id, and orgs numbered on their own share ids.
 */
export class EventIdsPerOrg1765200000000 implements MigrationInterface {
  name = 'EventIdsPerOrg1765200000000';

  async up(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    const t = columnTypes(dialect);
    await q.createTable(
      new Table({
        name: 'org_event_counters',
        columns: [
          { name: 'org_id', type: 'varchar', length: '64', isNullable: false, isPrimary: true, ...t.exactId },
          { name: 'last_id', type: 'bigint', isNullable: false },
          { name: 'pruned_id', type: 'bigint', isNullable: false },
        ],
      }),
    );
    if (dialect !== 'sqlite') {
      await q.query('ALTER TABLE turn_events DROP PRIMARY KEY, ADD PRIMARY KEY (org_id, id), DROP INDEX idx_events_org_id, ALGORITHM=INPLACE, LOCK=NONE');
      return;
    }
    await rebuildSqliteEvents(q, ['org_id', 'id']);
  }

  async down(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    const greatest = dialect === 'sqlite' ? 'MAX' : 'GREATEST';
    await renumberAcrossOrgs(q, columnTypes(dialect));
    // The old writer hands out the counter's next value: above every id handed out or kept.
    await q.query(
      `UPDATE event_counters SET value = ${greatest}(value, COALESCE((SELECT MAX(last_id) FROM org_event_counters), 0), COALESCE((SELECT MAX(id) FROM turn_events), 0))
        WHERE name = 'turn_events'`,
    );
    await q.query(
      `UPDATE event_counters SET value = ${greatest}(value, COALESCE((SELECT MAX(pruned_id) FROM org_event_counters), 0)) WHERE name = 'turn_events_pruned'`,
    );
    if (dialect !== 'sqlite') {
      await q.query('ALTER TABLE turn_events DROP PRIMARY KEY, ADD PRIMARY KEY (id), ADD INDEX idx_events_org_id (org_id, id)');
    } else {
      await rebuildSqliteEvents(q, ['id']);
      await q.createIndex('turn_events', new TableIndex({ name: 'idx_events_org_id', columnNames: ['org_id', 'id'] }));
    }
    await q.dropTable('org_event_counters');
  }
}

/**
 * Gives every event an id of its own across orgs, in (id, org) order: each event takes its own
 * id or, where an earlier one took that, the next free one above, so new = position +
 * the running MAX(id - position). Each org's events keep their order, and none moves below its
 * id: a client resuming from an id it was handed gets an event again rather than missing one.
 * Events from before `up` (one sequence already) keep their ids. The moved ones step through
 * negative ids, since every UPDATE checks the key row by row.
 */
async function renumberAcrossOrgs(q: QueryRunner, t: ReturnType<typeof columnTypes>): Promise<void> {
  await q.dropTable('event_id_moves', true);
  await q.createTable(
    new Table({
      name: 'event_id_moves',
      columns: [
        { name: 'org_id', type: 'varchar', length: '64', isNullable: false, isPrimary: true, ...t.exactId },
        { name: 'old_id', type: 'bigint', isNullable: false, isPrimary: true },
        { name: 'new_id', type: 'bigint', isNullable: false },
      ],
    }),
  );
  await q.query(`INSERT INTO event_id_moves (org_id, old_id, new_id)
    SELECT org_id, old_id, new_id FROM (
      SELECT org_id, id AS old_id, position + MAX(id - position) OVER (ORDER BY position ROWS UNBOUNDED PRECEDING) AS new_id
        FROM (SELECT org_id, id, ROW_NUMBER() OVER (ORDER BY id, org_id) AS position FROM turn_events) numbered
    ) renumbered WHERE new_id <> old_id`);
  await q.query('UPDATE turn_events SET id = -id WHERE EXISTS (SELECT 1 FROM event_id_moves m WHERE m.org_id = turn_events.org_id AND m.old_id = turn_events.id)');
  await q.query('UPDATE turn_events SET id = (SELECT new_id FROM event_id_moves m WHERE m.org_id = turn_events.org_id AND m.old_id = -turn_events.id) WHERE id < 0');
  await q.dropTable('event_id_moves');
}

/** SQLite cannot change a primary key in place: the table is copied into one keyed by `key` (in that order). */
async function rebuildSqliteEvents(q: QueryRunner, key: readonly string[]): Promise<void> {
  const old = await q.getTable('turn_events');
  if (!old) throw new Error('turn_events is missing');
  const columns = old.columns.map((c) => {
    const copy = c.clone();
    copy.isPrimary = key.includes(c.name);
    return copy;
  });
  // The key's columns first, in the key's order: SQLite's PRIMARY KEY follows the column order here.
  columns.sort((a, b) => rank(key, a.name) - rank(key, b.name));
  const names = columns.map((c) => `"${c.name}"`).join(', ');
  for (const index of old.indices) await q.dropIndex('turn_events', index);
  await q.createTable(new Table({ name: 'turn_events_rebuilt', columns }));
  await q.query(`INSERT INTO turn_events_rebuilt (${names}) SELECT ${names} FROM turn_events`);
  await q.dropTable('turn_events');
  await q.query('ALTER TABLE turn_events_rebuilt RENAME TO turn_events');
  for (const index of SECONDARY_INDEXES) await q.createIndex('turn_events', index.clone());
}

const rank = (key: readonly string[], name: string): number => (key.includes(name) ? key.indexOf(name) : key.length);

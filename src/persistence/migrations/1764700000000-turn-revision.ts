import type { MigrationInterface, QueryRunner } from 'typeorm';
import { columnTypes, dialectOf } from '../dialect';

/**
 * Issue 9: a turn's revision, moved by every write of its state, so the instance running a
 * turn can settle it in one guarded UPDATE (the turn still as that instance last wrote it)
 * instead of a locking read first. Plain ADD COLUMN, as in ServerToolsAudit1764650000000.
 */
export class TurnRevision1764700000000 implements MigrationInterface {
  name = 'TurnRevision1764700000000';

  async up(q: QueryRunner): Promise<void> {
    const integer = String(columnTypes(dialectOf(q.connection.options.type)).integer);
    await q.query(`ALTER TABLE ${q.connection.driver.escape('agent_session_turns')} ADD COLUMN ${q.connection.driver.escape('revision')} ${integer} NOT NULL DEFAULT (0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${q.connection.driver.escape('agent_session_turns')} DROP COLUMN ${q.connection.driver.escape('revision')}`);
  }
}

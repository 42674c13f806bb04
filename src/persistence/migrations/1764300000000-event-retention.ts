import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The pruning horizon of turn_events: resuming a subscription from before it is refused. */
export class EventRetention1764300000000 implements MigrationInterface {
  name = 'EventRetention1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`INSERT INTO event_counters (name, value) VALUES ('turn_events_pruned', 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM event_counters WHERE name = 'turn_events_pruned'`);
  }
}

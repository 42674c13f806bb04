import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialect';

/** Index name -> columns, in key order (sessions/session-keyset.ts `indexFor` names which list walks which). */
export const LIST_INDEXES: Readonly<Record<string, readonly string[]>> = {
  // The order's column after is_deleted makes a live list one range; the trailing columns
  // answer the member's visibility and the status filter from the index, without the rows.
  idx_sessions_list_updated: ['org_id', 'is_deleted', 'last_updated_date', 'id', 'owner_user_id', 'is_public', 'last_turn_status'],
  idx_sessions_list_created: ['org_id', 'is_deleted', 'creation_date', 'id', 'owner_user_id', 'is_public', 'last_turn_status'],
  idx_sessions_list_name: ['org_id', 'is_deleted', 'name', 'id', 'owner_user_id', 'is_public', 'last_turn_status'],
  idx_sessions_owner_updated: ['org_id', 'is_deleted', 'owner_user_id', 'last_updated_date', 'id'],
  idx_sessions_status_updated: ['org_id', 'is_deleted', 'last_turn_status', 'last_updated_date', 'id'],
};

/**
 * Issue 35: session lists cost one page at any depth. Online on a populated database: on
 * MySQL/MariaDB one ALTER adds every index with ALGORITHM=INPLACE, LOCK=NONE, so writes go on
 * while InnoDB builds them (the statement fails rather than lock, should a server not allow
 * it); SQLite, which is embedded and has one writer, builds each index in one statement.
 */
export class ScaleLists1765100000000 implements MigrationInterface {
  name = 'ScaleLists1765100000000';

  async up(q: QueryRunner): Promise<void> {
    const entries = Object.entries(LIST_INDEXES);
    if (dialectOf(q.connection.options.type) === 'sqlite') {
      for (const [name, columns] of entries) await q.query(`CREATE INDEX ${name} ON agent_sessions (${columns.join(', ')})`);
      return;
    }
    const adds = entries.map(([name, columns]) => `ADD INDEX ${name} (${columns.join(', ')})`);
    await q.query(`ALTER TABLE agent_sessions ${adds.join(', ')}, ALGORITHM=INPLACE, LOCK=NONE`);
  }

  async down(q: QueryRunner): Promise<void> {
    const names = Object.keys(LIST_INDEXES);
    if (dialectOf(q.connection.options.type) === 'sqlite') {
      for (const name of names) await q.query(`DROP INDEX ${name}`);
      return;
    }
    await q.query(`ALTER TABLE agent_sessions ${names.map((n) => `DROP INDEX ${n}`).join(', ')}, ALGORITHM=INPLACE, LOCK=NONE`);
  }
}

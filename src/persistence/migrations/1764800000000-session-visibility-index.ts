import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Issue 9: the list's count reads, for every session of the caller's org, only whether it is
 * deleted, its owner, whether it is public and its id (for the participant lookup). An index
 * of exactly those columns lets both databases count from the index instead of the table's
 * rows (a session row is ~26 columns): on embedded SQLite the count is the list's dearest
 * statement, and the list serves more pages a second with it (docs/performance.md). Its columns are written
 * when a session is created, deleted or made public, never by a turn, so turns pay nothing.
 */
export class SessionVisibilityIndex1764800000000 implements MigrationInterface {
  name = 'SessionVisibilityIndex1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createIndex(
      'agent_sessions',
      new TableIndex({ name: 'idx_sessions_org_visible', columnNames: ['org_id', 'is_deleted', 'owner_user_id', 'is_public', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('agent_sessions', 'idx_sessions_org_visible');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf, EXACT_ID_COLLATION } from '../dialect';

const KEY = 'org_id, owner_user_id, is_deleted, is_public';

/**
 * Issue 35: an org's session count, per owner, deleted or not and public or not, kept by triggers on
 * agent_sessions in the same transaction as every write (the lifecycle, forks, the bulk
 * seed), so an admin's totalCount, unfiltered or by owner, is a sum over a few rows per owner
 * instead of a count of the org, and a member's adds their participations in others' private
 * sessions. Turn writes do not touch it (no key column changes).
 *
 * On a populated MySQL/MariaDB database the table is filled from the sessions and the
 * triggers created while agent_sessions is locked for writes (reads go on), so that no write
 * falls between the two: one GROUP BY over the covering idx_sessions_org_visible index (its
 * cost per million sessions: docs/performance.md).
 */
export class SessionCounts1765100000002 implements MigrationInterface {
  name = 'SessionCounts1765100000002';

  async up(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    const fill = `INSERT INTO agent_session_counts (${KEY}, n) SELECT ${KEY}, COUNT(*) FROM agent_sessions GROUP BY ${KEY}`;
    if (dialect === 'sqlite') {
      await q.query(
        `CREATE TABLE agent_session_counts (org_id varchar(64) NOT NULL, owner_user_id varchar(64) NOT NULL, ` +
          `is_deleted boolean NOT NULL, is_public boolean NOT NULL, n integer NOT NULL, PRIMARY KEY (${KEY}))`,
      );
      const add = (row: 'NEW', by: string) =>
        `INSERT INTO agent_session_counts (${KEY}, n) VALUES (${row}.org_id, ${row}.owner_user_id, ${row}.is_deleted, ${row}.is_public, ${by}) ` +
        `ON CONFLICT (${KEY}) DO UPDATE SET n = n + ${by};`;
      const remove = `UPDATE agent_session_counts SET n = n - 1 WHERE org_id = OLD.org_id AND owner_user_id = OLD.owner_user_id AND is_deleted = OLD.is_deleted AND is_public = OLD.is_public;`;
      await q.query(`CREATE TRIGGER agent_session_counts_ai AFTER INSERT ON agent_sessions BEGIN ${add('NEW', '1')} END`);
      await q.query(
        `CREATE TRIGGER agent_session_counts_au AFTER UPDATE OF ${KEY} ON agent_sessions ` +
          `WHEN OLD.org_id IS NOT NEW.org_id OR OLD.owner_user_id IS NOT NEW.owner_user_id OR OLD.is_deleted IS NOT NEW.is_deleted OR OLD.is_public IS NOT NEW.is_public ` +
          `BEGIN ${remove} ${add('NEW', '1')} END`,
      );
      await q.query(`CREATE TRIGGER agent_session_counts_ad AFTER DELETE ON agent_sessions BEGIN ${remove} END`);
      await q.query(fill);
      return;
    }
    const collation = EXACT_ID_COLLATION[dialect];
    await q.query(
      `CREATE TABLE agent_session_counts (org_id varchar(64) COLLATE ${collation} NOT NULL, owner_user_id varchar(64) COLLATE ${collation} NOT NULL, ` +
        `is_deleted tinyint NOT NULL, is_public tinyint NOT NULL, n bigint NOT NULL, PRIMARY KEY (${KEY})) ENGINE=InnoDB`,
    );
    const add = `INSERT INTO agent_session_counts (${KEY}, n) VALUES (NEW.org_id, NEW.owner_user_id, NEW.is_deleted, NEW.is_public, 1) ON DUPLICATE KEY UPDATE n = n + 1`;
    const remove = `UPDATE agent_session_counts SET n = n - 1 WHERE org_id = OLD.org_id AND owner_user_id = OLD.owner_user_id AND is_deleted = OLD.is_deleted AND is_public = OLD.is_public`;
    await q.query('LOCK TABLES agent_sessions WRITE, agent_session_counts WRITE');
    try {
      await q.query(`CREATE TRIGGER agent_session_counts_ai AFTER INSERT ON agent_sessions FOR EACH ROW ${add}`);
      await q.query(
        `CREATE TRIGGER agent_session_counts_au AFTER UPDATE ON agent_sessions FOR EACH ROW ` +
          `IF NOT (NEW.org_id <=> OLD.org_id AND NEW.owner_user_id <=> OLD.owner_user_id AND NEW.is_deleted <=> OLD.is_deleted AND NEW.is_public <=> OLD.is_public) ` +
          `THEN ${remove}; ${add}; END IF`,
      );
      await q.query(`CREATE TRIGGER agent_session_counts_ad AFTER DELETE ON agent_sessions FOR EACH ROW ${remove}`);
      await q.query(fill);
    } finally {
      await q.query('UNLOCK TABLES');
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['ai', 'au', 'ad']) await q.query(`DROP TRIGGER IF EXISTS agent_session_counts_${t}`);
    await q.query('DROP TABLE agent_session_counts');
  }
}

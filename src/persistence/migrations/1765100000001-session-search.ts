import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf, EXACT_ID_COLLATION } from '../dialect';

/** Rows copied per statement while filling the index of an existing database. */
const BACKFILL_BATCH = 5_000;

/**
 * Issue 35: session search on a full-text index of names and descriptions
 * (domain/search-words.ts has the rule), in a table of its own that triggers on
 * agent_sessions keep in the same transaction as every write, whoever writes (the
 * lifecycle, forks, the bulk seed). A table of its own because the first FULLTEXT index
 * on an InnoDB table rebuilds it and blocks writes while it does; this one is created
 * empty, and filled afterwards in short batches (the triggers already cover new writes).
 * MariaDB/MySQL: InnoDB FULLTEXT, built without stopwords (so "about" or "when" can be
 * searched for). SQLite: FTS5 (unicode61), with its own copy of the text.
 */
export class SessionSearch1765100000001 implements MigrationInterface {
  name = 'SessionSearch1765100000001';

  async up(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    if (dialect === 'sqlite') {
      await q.query(`CREATE VIRTUAL TABLE agent_session_search USING fts5(session_id UNINDEXED, org_id UNINDEXED, body)`);
      const body = (row: 'NEW') => `${row}.name || ' ' || COALESCE(${row}.description, '')`;
      await q.query(
        `CREATE TRIGGER agent_session_search_ai AFTER INSERT ON agent_sessions BEGIN ` +
          `INSERT INTO agent_session_search (session_id, org_id, body) VALUES (NEW.id, NEW.org_id, ${body('NEW')}); END`,
      );
      await q.query(
        `CREATE TRIGGER agent_session_search_au AFTER UPDATE OF name, description ON agent_sessions BEGIN ` +
          `UPDATE agent_session_search SET body = ${body('NEW')} WHERE session_id = NEW.id; END`,
      );
      await q.query(`CREATE TRIGGER agent_session_search_ad AFTER DELETE ON agent_sessions BEGIN DELETE FROM agent_session_search WHERE session_id = OLD.id; END`);
      await q.query(`INSERT INTO agent_session_search (session_id, org_id, body) SELECT id, org_id, ${body('NEW').replace(/NEW\./g, '')} FROM agent_sessions`);
      return;
    }
    const collation = EXACT_ID_COLLATION[dialect];
    await q.query(
      `CREATE TABLE agent_session_search (session_id varchar(36) COLLATE ${collation} NOT NULL PRIMARY KEY, ` +
        `org_id varchar(64) COLLATE ${collation} NOT NULL, body text NOT NULL) ENGINE=InnoDB`,
    );
    // Stopwords are fixed when the index is built: none, so that every word can be searched for.
    await q.query('SET SESSION innodb_ft_enable_stopword = OFF');
    await q.query('ALTER TABLE agent_session_search ADD FULLTEXT INDEX ft_session_search (body)');
    await q.query('SET SESSION innodb_ft_enable_stopword = ON');
    const body = `CONCAT_WS(' ', NEW.name, NEW.description)`;
    const upsert = `INSERT INTO agent_session_search (session_id, org_id, body) VALUES (NEW.id, NEW.org_id, ${body}) ON DUPLICATE KEY UPDATE body = VALUES(body)`;
    await q.query(`CREATE TRIGGER agent_session_search_ai AFTER INSERT ON agent_sessions FOR EACH ROW ${upsert}`);
    await q.query(
      `CREATE TRIGGER agent_session_search_au AFTER UPDATE ON agent_sessions FOR EACH ROW ` +
        `IF NOT (NEW.name <=> OLD.name) OR NOT (NEW.description <=> OLD.description) THEN ${upsert}; END IF`,
    );
    await q.query(`CREATE TRIGGER agent_session_search_ad AFTER DELETE ON agent_sessions FOR EACH ROW DELETE FROM agent_session_search WHERE session_id = OLD.id`);
    // Existing sessions, a batch per statement in primary-key order: each holds its locks briefly.
    let after = '';
    for (;;) {
      const rows = (await q.query(`SELECT id FROM agent_sessions WHERE id > ? ORDER BY id LIMIT 1 OFFSET ${BACKFILL_BATCH - 1}`, [after])) as { id: string }[];
      const last = rows[0]?.id ?? null;
      await q.query(
        `INSERT IGNORE INTO agent_session_search (session_id, org_id, body) ` +
          `SELECT id, org_id, CONCAT_WS(' ', name, description) FROM agent_sessions WHERE id > ?${last === null ? '' : ' AND id <= ?'}`,
        last === null ? [after] : [after, last],
      );
      if (last === null) return;
      after = last;
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['ai', 'au', 'ad']) await q.query(`DROP TRIGGER IF EXISTS agent_session_search_${t}`);
    await q.query('DROP TABLE agent_session_search');
  }
}

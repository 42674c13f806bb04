import type { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectOf } from '../dialect';

const BODY = (row: 'NEW') => `${row}.name || ' ' || COALESCE(${row}.description, '')`;
const ROW_OF = (id: string) => `(SELECT id FROM agent_session_search_rows WHERE session_id = ${id})`;

/**
 * Issue 35, SQLite only: each session's row of the FTS5 index under a known rowid, kept in
 * agent_session_search_rows (an INTEGER PRIMARY KEY: a VACUUM keeps it). A search walking the
 * order's index tests each session against the matches' rowids, which FTS5 reads from the index
 * alone, ~0.2 µs a match; the session ids it tested against before are in the FTS5 table's own
 * rows, ~2 µs a match (117 ms for "rate limiter" at 200,000 sessions). The triggers find a
 * session's index row by rowid too, where they scanned the whole index (session_id is not
 * indexed in an FTS5 table) on every rename and delete. The existing index rows keep their
 * rowids; MySQL/MariaDB have nothing to do (InnoDB tests the walked rows themselves).
 */
export class SessionSearchRows1765300000000 implements MigrationInterface {
  name = 'SessionSearchRows1765300000000';

  async up(q: QueryRunner): Promise<void> {
    if (dialectOf(q.connection.options.type) !== 'sqlite') return;
    await q.query('CREATE TABLE agent_session_search_rows (id INTEGER PRIMARY KEY, session_id varchar(36) NOT NULL UNIQUE)');
    await q.query('INSERT INTO agent_session_search_rows (id, session_id) SELECT rowid, session_id FROM agent_session_search');
    for (const t of ['ai', 'au', 'ad']) await q.query(`DROP TRIGGER agent_session_search_${t}`);
    await q.query(
      `CREATE TRIGGER agent_session_search_ai AFTER INSERT ON agent_sessions BEGIN ` +
        `INSERT INTO agent_session_search_rows (session_id) VALUES (NEW.id); ` +
        `INSERT INTO agent_session_search (rowid, session_id, org_id, body) VALUES (${ROW_OF('NEW.id')}, NEW.id, NEW.org_id, ${BODY('NEW')}); END`,
    );
    await q.query(
      `CREATE TRIGGER agent_session_search_au AFTER UPDATE OF name, description ON agent_sessions BEGIN ` +
        `UPDATE agent_session_search SET body = ${BODY('NEW')} WHERE rowid = ${ROW_OF('NEW.id')}; END`,
    );
    await q.query(
      `CREATE TRIGGER agent_session_search_ad AFTER DELETE ON agent_sessions BEGIN ` +
        `DELETE FROM agent_session_search WHERE rowid = ${ROW_OF('OLD.id')}; ` +
        `DELETE FROM agent_session_search_rows WHERE session_id = OLD.id; END`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    if (dialectOf(q.connection.options.type) !== 'sqlite') return;
    for (const t of ['ai', 'au', 'ad']) await q.query(`DROP TRIGGER agent_session_search_${t}`);
    await q.query(
      `CREATE TRIGGER agent_session_search_ai AFTER INSERT ON agent_sessions BEGIN ` +
        `INSERT INTO agent_session_search (session_id, org_id, body) VALUES (NEW.id, NEW.org_id, ${BODY('NEW')}); END`,
    );
    await q.query(
      `CREATE TRIGGER agent_session_search_au AFTER UPDATE OF name, description ON agent_sessions BEGIN ` +
        `UPDATE agent_session_search SET body = ${BODY('NEW')} WHERE session_id = NEW.id; END`,
    );
    await q.query(`CREATE TRIGGER agent_session_search_ad AFTER DELETE ON agent_sessions BEGIN DELETE FROM agent_session_search WHERE session_id = OLD.id; END`);
    await q.query('DROP TABLE agent_session_search_rows');
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';
import { columnTypes, dialectOf, EXACT_ID_COLLATION } from '../dialect';

/** The session columns a participant row carries a copy of: what the lists sort and filter by. */
export const COPIED = ['is_deleted', 'creation_date', 'last_updated_date', 'name'] as const;

/**
 * Index name -> columns (sessions/session-keyset.ts walks them for a participant filter). The
 * order's key right after the user, is_deleted last: live sessions and all of them are one
 * range each, the deleted ones skipped in the index.
 */
export const PARTICIPANT_LIST_INDEXES: Readonly<Record<string, readonly string[]>> = {
  idx_participants_list_updated: ['org_id', 'user_id', 'last_updated_date', 'session_id', 'is_deleted'],
  idx_participants_list_created: ['org_id', 'user_id', 'creation_date', 'session_id', 'is_deleted'],
  idx_participants_list_name: ['org_id', 'user_id', 'name', 'session_id', 'is_deleted'],
};

const COUNT_KEY = 'org_id, user_id, is_deleted';
/**
 * A participant row's dates until its copies are made. An insert that carries the copies (the
 * bulk seed, which writes the session in the same transaction) is not looked up again.
 */
export const UNCOPIED = '1970-01-01 00:00:00.000';
/** Participant rows are backfilled this many sessions at a time: short statements, each its own transaction. */
const BACKFILL_SESSIONS = 5_000;

/**
 * Issue 35: a list filtered by participant reads one page of that user's sessions, not all of
 * them. Each participant row carries its session's sort keys and deleted flag, kept by
 * triggers in the transaction that changes the session (the row is copied from the session
 * when it joins), so the lists walk an index per order from the user; and
 * agent_session_participant_counts keeps each user's count of sessions, deleted or not, for
 * an admin's totalCount.
 *
 * The gateway's MySQL connections run at READ COMMITTED (persistence/database.ts): the
 * session trigger updates a session's participant rows by their key's prefix, which at
 * REPEATABLE READ also locks the gap after them, so a turn of one session waited on turns and
 * joins of the sessions next to it.
 *
 * On a populated MySQL/MariaDB database: the columns are added instantly, the triggers created,
 * then the existing rows are copied BACKFILL_SESSIONS sessions per statement (writes go on; a
 * write between two batches goes through the triggers), the indexes built online, and the counts
 * filled while the participants table is locked for writes (one GROUP BY over the new index).
 */
export class ParticipantLists1765400000000 implements MigrationInterface {
  name = 'ParticipantLists1765400000000';

  async up(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    if (dialect === 'sqlite') return this.upSqlite(q);
    const date = `datetime(${columnTypes(dialect).datetime.precision ?? 3})`;
    const [nameType] = (await q.query(
      "SELECT CHARACTER_SET_NAME AS cs, COLLATION_NAME AS co, CHARACTER_MAXIMUM_LENGTH AS len FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'agent_sessions' AND COLUMN_NAME = 'name'",
    )) as { cs: string; co: string; len: number }[];
    if (!nameType) throw new Error('agent_sessions.name not found');
    // Sorted as the session's own name sorts: the same character set and collation.
    await q.query(
      `ALTER TABLE agent_session_participants ADD COLUMN is_deleted tinyint NOT NULL DEFAULT 0, ` +
        `ADD COLUMN creation_date ${date} NOT NULL DEFAULT '${UNCOPIED}', ADD COLUMN last_updated_date ${date} NOT NULL DEFAULT '${UNCOPIED}', ` +
        `ADD COLUMN name varchar(${Number(nameType.len)}) CHARACTER SET ${nameType.cs} COLLATE ${nameType.co} NOT NULL DEFAULT '', ALGORITHM=INSTANT`,
    );
    // One lookup of the session for all four (a subquery each cost the bulk seed 40% more).
    await q.query(
      `CREATE TRIGGER agent_session_participants_copy BEFORE INSERT ON agent_session_participants FOR EACH ROW BEGIN ` +
        `DECLARE d tinyint; DECLARE c ${date}; DECLARE u ${date}; DECLARE n varchar(${Number(nameType.len)}) CHARACTER SET ${nameType.cs} COLLATE ${nameType.co}; ` +
        `IF NEW.creation_date = '${UNCOPIED}' THEN ` +
        `SELECT s.is_deleted, s.creation_date, s.last_updated_date, s.name INTO d, c, u, n FROM agent_sessions s WHERE s.id = NEW.session_id; ` +
        `IF c IS NOT NULL THEN SET NEW.is_deleted = d, NEW.creation_date = c, NEW.last_updated_date = u, NEW.name = n; END IF; END IF; END`,
    );
    // BINARY: a rename that changes only the case is a change.
    const same = COPIED.map((c) => (c === 'name' ? 'BINARY NEW.name <=> BINARY OLD.name' : `NEW.${c} <=> OLD.${c}`)).join(' AND ');
    await q.query(
      `CREATE TRIGGER agent_sessions_participant_copies AFTER UPDATE ON agent_sessions FOR EACH ROW IF NOT (${same}) THEN ` +
        `UPDATE agent_session_participants SET ${COPIED.map((c) => `${c} = NEW.${c}`).join(', ')} WHERE session_id = NEW.id; END IF`,
    );
    for (let from: string | null = ''; from !== null; ) {
      const [next] = (await q.query(`SELECT id FROM agent_sessions WHERE id > ? ORDER BY id LIMIT 1 OFFSET ${BACKFILL_SESSIONS - 1}`, [from])) as { id: string }[];
      const upTo = next ? ' AND p.session_id <= ?' : '';
      await q.query(
        `UPDATE agent_session_participants p JOIN agent_sessions s ON s.id = p.session_id SET ${COPIED.map((c) => `p.${c} = s.${c}`).join(', ')} ` +
          `WHERE p.session_id > ?${upTo}`,
        next ? [from, next.id] : [from],
      );
      from = next ? next.id : null;
    }
    const adds = Object.entries(PARTICIPANT_LIST_INDEXES).map(([name, columns]) => `ADD INDEX ${name} (${columns.join(', ')})`);
    await q.query(`ALTER TABLE agent_session_participants ${adds.join(', ')}, DROP INDEX idx_participants_org_user, ALGORITHM=INPLACE, LOCK=NONE`);

    const collation = EXACT_ID_COLLATION[dialect];
    await q.query(
      `CREATE TABLE agent_session_participant_counts (org_id varchar(64) COLLATE ${collation} NOT NULL, user_id varchar(64) COLLATE ${collation} NOT NULL, ` +
        `is_deleted tinyint NOT NULL, n bigint NOT NULL, PRIMARY KEY (${COUNT_KEY})) ENGINE=InnoDB`,
    );
    const add = `INSERT INTO agent_session_participant_counts (${COUNT_KEY}, n) VALUES (NEW.org_id, NEW.user_id, NEW.is_deleted, 1) ON DUPLICATE KEY UPDATE n = n + 1`;
    const remove = `UPDATE agent_session_participant_counts SET n = n - 1 WHERE org_id = OLD.org_id AND user_id = OLD.user_id AND is_deleted = OLD.is_deleted`;
    await q.query('LOCK TABLES agent_session_participants WRITE, agent_session_participant_counts WRITE');
    try {
      await q.query(`CREATE TRIGGER agent_session_participant_counts_ai AFTER INSERT ON agent_session_participants FOR EACH ROW ${add}`);
      await q.query(
        `CREATE TRIGGER agent_session_participant_counts_au AFTER UPDATE ON agent_session_participants FOR EACH ROW ` +
          `IF NOT (NEW.org_id <=> OLD.org_id AND NEW.user_id <=> OLD.user_id AND NEW.is_deleted <=> OLD.is_deleted) THEN ${remove}; ${add}; END IF`,
      );
      await q.query(`CREATE TRIGGER agent_session_participant_counts_ad AFTER DELETE ON agent_session_participants FOR EACH ROW ${remove}`);
      await q.query(
        `INSERT INTO agent_session_participant_counts (${COUNT_KEY}, n) SELECT ${COUNT_KEY}, COUNT(*) FROM agent_session_participants ` +
          `FORCE INDEX (idx_participants_list_updated) GROUP BY ${COUNT_KEY}`,
      );
    } finally {
      await q.query('UNLOCK TABLES');
    }
  }

  /** SQLite is embedded with one writer: the same in plain statements, the copies made after the insert (no BEFORE-trigger assignment). */
  private async upSqlite(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE agent_session_participants ADD COLUMN is_deleted boolean NOT NULL DEFAULT 0');
    await q.query(`ALTER TABLE agent_session_participants ADD COLUMN creation_date datetime NOT NULL DEFAULT '${UNCOPIED}'`);
    await q.query(`ALTER TABLE agent_session_participants ADD COLUMN last_updated_date datetime NOT NULL DEFAULT '${UNCOPIED}'`);
    await q.query("ALTER TABLE agent_session_participants ADD COLUMN name varchar(200) COLLATE NOCASE NOT NULL DEFAULT ''");
    const columns = COPIED.join(', ');
    const copy = (where: string) =>
      `UPDATE agent_session_participants SET (${columns}) = (SELECT ${columns} FROM agent_sessions s WHERE s.id = agent_session_participants.session_id) ` +
      `WHERE ${where} AND EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = agent_session_participants.session_id)`;
    await q.query(copy('1 = 1'));
    await q.query(
      `CREATE TRIGGER agent_session_participants_copy AFTER INSERT ON agent_session_participants WHEN NEW.creation_date = '${UNCOPIED}' BEGIN ` +
        `${copy('session_id = NEW.session_id AND user_id = NEW.user_id')}; END`,
    );
    // `IS NOT` on the name compares with its NOCASE collation; the copy follows a change of case too.
    const changed = COPIED.map((c) => (c === 'name' ? 'OLD.name <> NEW.name COLLATE BINARY' : `OLD.${c} IS NOT NEW.${c}`)).join(' OR ');
    await q.query(
      `CREATE TRIGGER agent_sessions_participant_copies AFTER UPDATE OF ${columns} ON agent_sessions WHEN ${changed} BEGIN ` +
        `UPDATE agent_session_participants SET ${COPIED.map((c) => `${c} = NEW.${c}`).join(', ')} WHERE session_id = NEW.id; END`,
    );
    for (const [name, columns] of Object.entries(PARTICIPANT_LIST_INDEXES)) await q.query(`CREATE INDEX ${name} ON agent_session_participants (${columns.join(', ')})`);
    await q.query('DROP INDEX idx_participants_org_user');
    await q.query(
      `CREATE TABLE agent_session_participant_counts (org_id varchar(64) NOT NULL, user_id varchar(64) NOT NULL, is_deleted boolean NOT NULL, ` +
        `n integer NOT NULL, PRIMARY KEY (${COUNT_KEY}))`,
    );
    const add = `INSERT INTO agent_session_participant_counts (${COUNT_KEY}, n) VALUES (NEW.org_id, NEW.user_id, NEW.is_deleted, 1) ON CONFLICT (${COUNT_KEY}) DO UPDATE SET n = n + 1;`;
    const remove = `UPDATE agent_session_participant_counts SET n = n - 1 WHERE org_id = OLD.org_id AND user_id = OLD.user_id AND is_deleted = OLD.is_deleted;`;
    // The insert counts the row as inserted (not deleted); the copy's update then moves it, should its session be deleted.
    await q.query(`CREATE TRIGGER agent_session_participant_counts_ai AFTER INSERT ON agent_session_participants BEGIN ${add} END`);
    await q.query(
      `CREATE TRIGGER agent_session_participant_counts_au AFTER UPDATE OF ${COUNT_KEY} ON agent_session_participants ` +
        `WHEN OLD.org_id IS NOT NEW.org_id OR OLD.user_id IS NOT NEW.user_id OR OLD.is_deleted IS NOT NEW.is_deleted BEGIN ${remove} ${add} END`,
    );
    await q.query(`CREATE TRIGGER agent_session_participant_counts_ad AFTER DELETE ON agent_session_participants BEGIN ${remove} END`);
    await q.query(`INSERT INTO agent_session_participant_counts (${COUNT_KEY}, n) SELECT ${COUNT_KEY}, COUNT(*) FROM agent_session_participants GROUP BY ${COUNT_KEY}`);
  }

  async down(q: QueryRunner): Promise<void> {
    const dialect = dialectOf(q.connection.options.type);
    for (const t of ['agent_session_participant_counts_ai', 'agent_session_participant_counts_au', 'agent_session_participant_counts_ad', 'agent_session_participants_copy', 'agent_sessions_participant_copies']) {
      await q.query(`DROP TRIGGER IF EXISTS ${t}`);
    }
    await q.query('DROP TABLE agent_session_participant_counts');
    const names = Object.keys(PARTICIPANT_LIST_INDEXES);
    if (dialect === 'sqlite') {
      for (const name of names) await q.query(`DROP INDEX ${name}`);
      await q.query('CREATE INDEX idx_participants_org_user ON agent_session_participants (org_id, user_id)');
      for (const c of COPIED) await q.query(`ALTER TABLE agent_session_participants DROP COLUMN ${c}`);
      return;
    }
    await q.query(
      `ALTER TABLE agent_session_participants ${names.map((n) => `DROP INDEX ${n}`).join(', ')}, ADD INDEX idx_participants_org_user (org_id, user_id), ` +
        `${COPIED.map((c) => `DROP COLUMN ${c}`).join(', ')}`,
    );
  }
}

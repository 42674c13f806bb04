import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, type TestDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';
import { addTurn } from '../support/turns';
import { alice, user } from '../support/testkit';

const bob = user('bob');

/**
 * A session's change rewrites its participant rows' copies (ParticipantLists1765400000000) by
 * the key's prefix. At REPEATABLE READ that also locked the gap after them, up to the next
 * session's first participant: a turn or a join there waited for the first session's
 * transaction to end. The gateway's connections run at READ COMMITTED (sessionSetupSql).
 */
describeWithMysql('participant copies on MySQL/MariaDB', () => {
  let t: TestDatabase;
  let sessions: SessionStore['lifecycle'];
  beforeAll(async () => {
    t = await mysqlTestDatabase();
    sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } }).lifecycle;
  });
  afterAll(() => t.dispose());

  it("let a turn and a join of the next session commit while the session before it has a transaction open", async () => {
    const created = await Promise.all(['one', 'two'].map((name) => sessions.createSession(alice, { name, agentContextId: 'ac', isPublic: true })));
    const [first, next] = created.map((s) => s.id).sort();
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let updated = (): void => undefined;
    const holding = new Promise<void>((resolve) => (updated = resolve));
    // The gateway's own transaction: the session row and its participant rows' copies changed, not yet committed.
    const open = t.db.sqlTransaction(async (tx) => {
      await tx.rows('UPDATE agent_sessions SET last_updated_date = ? WHERE id = ?', [new Date(), first!]);
      updated();
      await held;
      await tx.commitWith([]);
    });
    try {
      await holding;
      const others = Promise.all([addTurn(sessions, alice, next!), addTurn(sessions, bob, next!), sessions.createSession(bob, { name: 'three', agentContextId: 'ac' })]);
      let timer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        others.then(() => 'committed'),
        new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), 10_000))),
      ]);
      clearTimeout(timer);
      expect(settled).toBe('committed');
    } finally {
      release();
      await open;
    }
    const copies = await t.db.read<{ user_id: string; same: number | string }>(
      'SELECT p.user_id, p.last_updated_date = s.last_updated_date AS same FROM agent_session_participants p JOIN agent_sessions s ON s.id = p.session_id WHERE p.session_id = ? ORDER BY p.user_id',
      [next!],
    );
    // Bob joined the next session by running a turn in it; both rows carry its latest update.
    expect(copies.map((c) => `${c.user_id}:${Number(c.same)}`)).toEqual(['alice:1', 'bob:1']);
  }, 60_000);
});

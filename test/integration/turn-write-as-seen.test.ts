import type { TurnStatusEvent } from '../../src/events/turn-events';
import { guardFor, mysqlTransaction } from '../../src/persistence/mysql-sql';
import { StaleReadError, type Statement } from '../../src/persistence/sql';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice, bob, boss, mallory } from '../support/testkit';

/**
 * addTurn with `seen` (the planner's read of the session) writes without a locking read, in
 * one round trip on MySQL. Whatever changed between that read and the write, the result must
 * be the locking path's: the next sequence number, the refusal the session now deserves, and
 * nothing written by a write that was refused.
 */
function asSeenSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let store: SessionStore;
  const events: TurnStatusEvent[] = [];
  beforeAll(async () => {
    t = await open();
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: (e) => events.push(e) } });
  });
  afterAll(() => t.dispose());

  const turns = () => store.lifecycle;
  const seenBy = async (caller: typeof alice, id: string) => (await turns().getSession(caller, id))!;
  const eventsOf = (sessionId: string) => events.filter((e) => e.sessionId === sessionId);
  const participantsOf = async (sessionId: string) =>
    (await t.db.dataSource.query<{ user_id: string }[]>('SELECT user_id FROM agent_session_participants WHERE session_id = ? ORDER BY user_id', [sessionId])).map((r) => r.user_id);

  it('adds the turn without reading the session again while it is as seen, and no other statement reads it', async () => {
    const session = await turns().createSession(alice, { name: 'As seen', agentContextId: 'ac-1' });
    const seen = await seenBy(alice, session.id);
    t.statements.length = 0;
    const turn = await turns().addTurn(alice, session.id, { instructionSummary: 'one' }, { seen, rejectIfBusy: true });
    expect(turn.sequenceNumber).toBe(1);
    expect(t.statements.some((sql) => /SELECT[\s\S]*FROM agent_sessions/.test(sql))).toBe(false);
    expect(await seenBy(alice, session.id)).toMatchObject({ turnCount: 1, lastTurnStatus: 'PENDING' });
    expect(eventsOf(session.id).map((e) => [e.turnId, e.status])).toEqual([[turn.id, 'PENDING']]);
  });

  it('takes the next number when another turn was added since the read', async () => {
    const session = await turns().createSession(alice, { name: 'Raced', agentContextId: 'ac-1' });
    const seen = await seenBy(alice, session.id);
    const other = await turns().addTurn(alice, session.id, { instructionSummary: 'meanwhile' });
    await turns().completeTurn(alice, session.id, other.id, { agentAnswerSummary: 'a', fullAgentAnswerUrl: null, openAIResponseId: 'r', openAIResponseReceivedDate: new Date() });
    const turn = await turns().addTurn(alice, session.id, { instructionSummary: 'late' }, { seen, rejectIfBusy: true });
    expect(turn.sequenceNumber).toBe(2);
    expect(await seenBy(alice, session.id)).toMatchObject({ turnCount: 2, lastTurnStatus: 'PENDING' });
    expect(eventsOf(session.id).filter((e) => e.status === 'PENDING').map((e) => e.sequenceNumber)).toEqual([1, 2]);
  });

  it('numbers 20 turns added at once from the same read 1..20, one event each', async () => {
    const session = await turns().createSession(alice, { name: 'Crowd', agentContextId: 'ac-1', isPublic: true });
    const seen = await seenBy(alice, session.id);
    const writers = Array.from({ length: 20 }, (_, i) => (i % 2 ? alice : bob));
    const added = await Promise.all(writers.map((w, i) => turns().addTurn(w, session.id, { instructionSummary: `turn ${i}` }, { seen })));
    expect(added.map((t) => t.sequenceNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect((await seenBy(alice, session.id)).turnCount).toBe(20);
    expect(eventsOf(session.id).map((e) => e.sequenceNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await participantsOf(session.id)).toEqual(['alice', 'bob']);
  });

  it('refuses as busy when a turn started since the read, and writes nothing', async () => {
    const session = await turns().createSession(alice, { name: 'Busy since', agentContextId: 'ac-1' });
    const seen = await seenBy(alice, session.id);
    await turns().addTurn(alice, session.id, { instructionSummary: 'meanwhile' });
    await expect(turns().addTurn(alice, session.id, { instructionSummary: 'no' }, { seen, rejectIfBusy: true })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    expect((await seenBy(alice, session.id)).turnCount).toBe(1);
    expect(eventsOf(session.id)).toHaveLength(1);
  });

  it('refuses a session deleted since the read (NOT_FOUND for its owner, CONFLICT for an admin), and one made private (NOT_FOUND)', async () => {
    const deleted = await turns().createSession(alice, { name: 'Deleted since', agentContextId: 'ac-1' });
    const [seenByAlice, seenByBoss] = [await seenBy(alice, deleted.id), await seenBy(boss, deleted.id)];
    await turns().deleteSession(alice, deleted.id);
    await expect(turns().addTurn(alice, deleted.id, { instructionSummary: 'no' }, { seen: seenByAlice })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(turns().addTurn(boss, deleted.id, { instructionSummary: 'no' }, { seen: seenByBoss })).rejects.toMatchObject({ code: 'CONFLICT' });

    const hidden = await turns().createSession(alice, { name: 'Private since', agentContextId: 'ac-1', isPublic: true });
    const seenByBob = await seenBy(bob, hidden.id);
    await turns().updateSession(alice, hidden.id, { isPublic: false });
    await expect(turns().addTurn(bob, hidden.id, { instructionSummary: 'no' }, { seen: seenByBob })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    for (const id of [deleted.id, hidden.id]) {
      expect(eventsOf(id)).toEqual([]);
      expect((await turns().getSession(boss, id))?.turnCount).toBe(0);
    }
    expect(await participantsOf(hidden.id)).toEqual(['alice']);
  });

  it('makes a new author a participant once, and never writes across orgs', async () => {
    const session = await turns().createSession(alice, { name: 'Shared', agentContextId: 'ac-1', isPublic: true });
    const first = await turns().addTurn(bob, session.id, { instructionSummary: 'one' }, { seen: await seenBy(bob, session.id) });
    await turns().completeTurn(bob, session.id, first.id, { agentAnswerSummary: 'a', fullAgentAnswerUrl: null, openAIResponseId: 'r', openAIResponseReceivedDate: new Date() });
    await turns().addTurn(bob, session.id, { instructionSummary: 'two' }, { seen: await seenBy(bob, session.id) });
    expect(await participantsOf(session.id)).toEqual(['alice', 'bob']);
    // Another org's caller holding a snapshot it could never have read changes nothing.
    const seen = await seenBy(alice, session.id);
    await expect(turns().addTurn(mallory, session.id, { instructionSummary: 'x' }, { seen })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await seenBy(alice, session.id)).turnCount).toBe(2);
  });

  it('rolls back a transaction whose guarded statement changed no row, before its later statements run', async () => {
    const session = await turns().createSession(alice, { name: 'Guarded', agentContextId: 'ac-1' });
    const rename = (name: string, where: string) => ({
      sql: `UPDATE agent_sessions SET name = ? WHERE id = ? AND name = ?`,
      params: [name, session.id, where],
    });
    await expect(
      t.db.sqlTransaction((tx) => tx.commitWith([rename('first', 'Guarded'), { ...rename('never', 'no such name'), mustChangeOneRow: true }, rename('after', 'first')])),
    ).rejects.toBeInstanceOf(StaleReadError);
    expect((await seenBy(alice, session.id)).name).toBe('Guarded');
    await t.db.sqlTransaction((tx) => tx.commitWith([{ ...rename('kept', 'Guarded'), mustChangeOneRow: true }, rename('kept too', 'kept')]));
    expect((await seenBy(alice, session.id)).name).toBe('kept too');
  });
}

describe('adding a turn to the session as seen, on embedded SQLite', () => asSeenSuite(sqliteTestDatabase));
describeWithMysql('adding a turn to the session as seen, on MySQL/MariaDB', () => asSeenSuite(mysqlTestDatabase));

describeWithMysql('the row guard of each MySQL-family dialect, on this server', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await mysqlTestDatabase();
    await t.db.dataSource.query('CREATE TABLE guard_probe (id INT PRIMARY KEY, v INT NOT NULL)');
    await t.db.dataSource.query('INSERT INTO guard_probe (id, v) VALUES (1, 0)');
  });
  afterAll(() => t.dispose());

  it('stops and rolls back a transaction whose guarded statement changed no row, with either guard', async () => {
    // MySQL's guard is plain SQL that MariaDB runs too: on MariaDB both are checked.
    const dialects = t.db.dialect === 'mariadb' ? (['mysql', 'mariadb'] as const) : (['mysql'] as const);
    const set = (v: number, id: number): Statement => ({ sql: 'UPDATE guard_probe SET v = ? WHERE id = ?', params: [v, id] });
    for (const dialect of dialects) {
      const run = (statements: Statement[]) =>
        mysqlTransaction(t.db.dataSource.createQueryRunner('master'), guardFor(dialect), (tx) => tx.commitWith(statements));
      await expect(run([set(7, 1), { ...set(8, 2), mustChangeOneRow: true }, set(9, 1)])).rejects.toBeInstanceOf(StaleReadError);
      expect(await t.db.dataSource.query('SELECT v FROM guard_probe')).toEqual([{ v: 0 }]);
      await run([{ ...set(7, 1), mustChangeOneRow: true }, set(9, 1)]);
      expect(await t.db.dataSource.query('SELECT v FROM guard_probe')).toEqual([{ v: 9 }]);
      await run([set(0, 1)]);
    }
  });
});

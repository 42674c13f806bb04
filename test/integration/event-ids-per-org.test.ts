import { createConnection } from 'mysql2/promise';
import { TurnEventRepository } from '../../src/events/turn-event.repository';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { addTurn, completeTurn } from '../support/turns';
import { alice, startGateway, user, type TestGateway } from '../support/testkit';

const globexUser = user('gina', 'globex');
const bob = user('bob');
const MIGRATION = 'EventIdsPerOrg1765200000000';

function perOrgSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let sessions: SessionStore['lifecycle'];
  let history: TurnEventRepository;
  beforeEach(async () => {
    t = await open();
    sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } }).lifecycle;
    history = new TurnEventRepository(t.db);
  });
  afterEach(() => t.dispose());

  it("numbers each org's events on its own, and one org's activity moves no other org's latest id", async () => {
    const mine = await sessions.createSession(alice, { name: 'acme', agentContextId: 'ac' });
    const theirs = await sessions.createSession(globexUser, { name: 'globex', agentContextId: 'ac' });
    for (let i = 0; i < 3; i++) {
      const turn = await addTurn(sessions, alice, mine.id);
      await completeTurn(sessions, alice, mine.id, turn.id);
    }
    expect(await history.latestId('acme')).toBe(6);
    expect(await history.latestId('globex')).toBe(0);
    await addTurn(sessions, globexUser, theirs.id);
    expect(await history.latestId('globex')).toBe(1);
    expect(await history.latestId('acme')).toBe(6);
    expect((await history.after({ orgId: 'acme' }, 0, 100)).map((e) => `${e.eventId}:${e.sequenceNumber}:${e.status}`)).toEqual([
      '1:1:PENDING',
      '2:1:COMPLETED',
      '3:2:PENDING',
      '4:2:COMPLETED',
      '5:3:PENDING',
      '6:3:COMPLETED',
    ]);
    expect((await history.after({ orgId: 'globex' }, 0, 100)).map((e) => [e.eventId, e.sessionId])).toEqual([[1, theirs.id]]);
    await expect(history.assertResumable('globex', 6)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(history.assertResumable('acme', 6)).resolves.toBeUndefined();
  });

  it('carries events stored before the migration over: their ids stay valid resume points, and each org goes on above them', async () => {
    while ((await t.db.dataSource.query<{ name: string }[]>('SELECT name FROM migrations')).some((m) => m.name === MIGRATION)) {
      await t.db.dataSource.undoLastMigration();
    }
    // The deployment-wide sequence as it was: acme had 1, 2 and 4, globex 3 and 5; 1 is pruned.
    for (const [id, org] of [
      [2, 'acme'],
      [3, 'globex'],
      [4, 'acme'],
      [5, 'globex'],
    ] as const) {
      await t.db.dataSource.query(
        `INSERT INTO turn_events (id, org_id, session_id, turn_id, sequence_number, previous_status, status, status_time_stamp, created_by_user_id, created_by_user_name, recorded_date)
         VALUES (?, ?, 's', ?, ?, NULL, 'PENDING', ?, 'u', 'U', ?)`,
        [id, org, `t${id}`, id, '2026-03-01 00:00:00.000', '2026-03-01 00:00:00.000'],
      );
    }
    await t.db.dataSource.query(`UPDATE event_counters SET value = 5 WHERE name = 'turn_events'`);
    await t.db.dataSource.query(`UPDATE event_counters SET value = 1 WHERE name = 'turn_events_pruned'`);
    await t.db.dataSource.runMigrations();

    for (const org of ['acme', 'globex', 'initech']) {
      // latestEventId was deployment-wide: any org's client may hold 5.
      expect(await history.latestId(org)).toBe(5);
      expect(await history.horizon(org)).toBe(1);
      await expect(history.assertResumable(org, 5)).resolves.toBeUndefined();
      await expect(history.assertResumable(org, 0)).rejects.toMatchObject({ code: 'EVENTS_PRUNED' });
    }
    expect((await history.after({ orgId: 'acme' }, 1, 100)).map((e) => e.eventId)).toEqual([2, 4]);
    expect((await history.after({ orgId: 'globex' }, 3, 100)).map((e) => e.eventId)).toEqual([5]);

    const inAcme = await sessions.createSession(alice, { name: 'after', agentContextId: 'ac' });
    const inGlobex = await sessions.createSession(globexUser, { name: 'after', agentContextId: 'ac' });
    await addTurn(sessions, alice, inAcme.id);
    await addTurn(sessions, alice, inAcme.id);
    await addTurn(sessions, globexUser, inGlobex.id);
    expect((await history.after({ orgId: 'acme' }, 1, 100)).map((e) => e.eventId)).toEqual([2, 4, 6, 7]);
    expect((await history.after({ orgId: 'globex' }, 1, 100)).map((e) => e.eventId)).toEqual([3, 5, 6]);
    expect(await history.latestId('initech')).toBe(5);
  });

  it('goes down with events of two orgs under the same ids (one deployment-wide sequence again, each org in its order), and up again', async () => {
    const mine = await sessions.createSession(alice, { name: 'acme', agentContextId: 'ac' });
    const theirs = await sessions.createSession(globexUser, { name: 'globex', agentContextId: 'ac' });
    for (let i = 0; i < 2; i++) await completeTurn(sessions, alice, mine.id, (await addTurn(sessions, alice, mine.id)).id);
    await completeTurn(sessions, globexUser, theirs.id, (await addTurn(sessions, globexUser, theirs.id)).id);
    // The pruner's work in both orgs: what is left starts above a gap, and numbering it from 1 again would move ids down.
    await t.db.dataSource.query('DELETE FROM turn_events WHERE id = 1');
    await t.db.dataSource.query('UPDATE org_event_counters SET pruned_id = 1');
    const before = await eventsByOrg();
    expect(before).toEqual({ acme: ['2:1:COMPLETED', '3:2:PENDING', '4:2:COMPLETED'], globex: ['2:1:COMPLETED'] });

    // Migrations released after this one go down first.
    const applied = async () => (await t.db.dataSource.query<{ name: string }[]>('SELECT name FROM migrations')).map((m) => m.name);
    while ((await applied()).includes(MIGRATION)) await t.db.dataSource.undoLastMigration();
    const down = await t.db.dataSource.query<{ id: number | string; org_id: string; sequence_number: number; status: string }[]>(
      'SELECT id, org_id, sequence_number, status FROM turn_events ORDER BY id',
    );
    const ids = down.map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(4);
    // Each org's events keep their order; none moves below the id it had (a client resuming from an old id sees an event again rather than misses one).
    const withoutIds = (org: string) => before[org]!.map((e) => e.replace(/^\d+:/, ''));
    for (const org of ['acme', 'globex']) {
      const mineDown = down.filter((e) => e.org_id === org);
      expect(mineDown.map((e) => `${e.sequence_number}:${e.status}`)).toEqual(withoutIds(org));
      mineDown.forEach((e, i) => expect(Number(e.id)).toBeGreaterThanOrEqual(Number(before[org]![i]!.split(':')[0])));
    }
    // The old writer takes the counter's next value: it must be above every id kept.
    const [counter] = await t.db.dataSource.query<{ value: number | string }[]>(`SELECT value FROM event_counters WHERE name = 'turn_events'`);
    expect(Number(counter!.value)).toBeGreaterThanOrEqual(Math.max(...ids));

    await t.db.dataSource.runMigrations();
    const latest = Number(counter!.value);
    for (const org of ['acme', 'globex']) {
      expect(await history.latestId(org)).toBe(latest);
      expect(await history.horizon(org)).toBe(1);
      expect((await history.after({ orgId: org }, 0, 100)).map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(withoutIds(org));
    }
    await addTurn(sessions, globexUser, theirs.id);
    expect(await history.latestId('globex')).toBe(latest + 1);
  });

  /** Each org's events as `id:sequence:status`, in id order. */
  async function eventsByOrg(): Promise<Record<string, string[]>> {
    const byOrg: Record<string, string[]> = {};
    for (const org of ['acme', 'globex']) {
      byOrg[org] = (await history.after({ orgId: org }, 0, 100)).map((e) => `${e.eventId}:${e.sequenceNumber}:${e.status}`);
    }
    return byOrg;
  }
}

describe('event ids per org on embedded SQLite', () => perOrgSuite(sqliteTestDatabase));
describeWithMysql('event ids per org on MySQL/MariaDB', () => perOrgSuite(mysqlTestDatabase));

/** 'committed', or 'still waiting' when `work` has not settled within `ms`. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([work.then(() => 'committed'), new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)))]);
  clearTimeout(timer);
  return settled;
}

describeWithMysql('turn changes that must not wait on each other on MySQL/MariaDB', () => {
  let t: TestDatabase;
  let sessions: SessionStore['lifecycle'];
  beforeAll(async () => {
    t = await mysqlTestDatabase();
    sessions = createSessionStore({ db: t.db, events: { turnStatusChanged: () => undefined } }).lifecycle;
  });
  afterAll(() => t.dispose());

  it("do not wait on one row: with acme's event counter locked, 40 new sessions in 20 other orgs commit while acme's own turn waits", async () => {
    const acmeSession = await sessions.createSession(alice, { name: 'held', agentContextId: 'ac' });
    await addTurn(sessions, alice, acmeSession.id);
    const holder = await createConnection({ uri: t.url! });
    try {
      await holder.query('START TRANSACTION');
      await holder.query(`SELECT last_id FROM org_event_counters WHERE org_id = 'acme' FOR UPDATE`);
      let acmeDone = false;
      const acmeTurn = addTurn(sessions, alice, acmeSession.id).then((turn) => {
        acmeDone = true;
        return turn;
      });
      const others = Array.from({ length: 40 }, (_, i) => {
        const caller = user(`user-${i}`, `org-${i % 20}`);
        return sessions.startSession(caller, { name: `burst ${i}`, agentContextId: 'ac' }, { instructionSummary: 'go' });
      });
      expect(await settledWithin(Promise.all(others), 15_000)).toBe('committed');
      expect(acmeDone).toBe(false);
      await holder.query('COMMIT');
      expect((await acmeTurn).sequenceNumber).toBe(2);
    } finally {
      await holder.end();
    }
    const history = new TurnEventRepository(t.db);
    for (let org = 0; org < 20; org++) expect(await history.latestId(`org-${org}`)).toBe(2);
  }, 60_000);

  /**
   * A session's change rewrites its participant rows' copies (ParticipantLists1765400000000)
   * by the key's prefix. At REPEATABLE READ that also locked the gap after them, up to the
   * next session's first participant: a turn or a join there waited for the first session's
   * transaction to end. The gateway's connections run at READ COMMITTED (sessionSetupSql); README, "MySQL and MariaDB".
   */
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
      expect(await settledWithin(others, 10_000)).toBe('committed');
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

describe('latestEventId over HTTP', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway();
  });
  afterAll(() => t.close());

  it("reflects the caller's org only", async () => {
    const latest = async (token: string) => (await t.gql<{ latestEventId: string }>(token, '{ latestEventId }')).body.data?.latestEventId;
    const acmeToken = t.tokenOf(alice);
    const globexToken = t.tokenOf(globexUser);
    const globexBefore = await latest(globexToken);
    const acmeBefore = Number(await latest(acmeToken));
    const lifecycle = t.gateway.sessions.lifecycle;
    const session = await lifecycle.createSession(alice, { name: 'busy acme', agentContextId: 'ac' });
    for (let i = 0; i < 3; i++) await addTurn(lifecycle, alice, session.id);
    expect(Number(await latest(acmeToken))).toBe(acmeBefore + 3);
    expect(await latest(globexToken)).toBe(globexBefore);
  });
});

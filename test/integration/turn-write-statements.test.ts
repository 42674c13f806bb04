import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** The statements of the transactions in `statements` (BEGIN/START TRANSACTION through COMMIT), one list per transaction. */
function transactions(statements: readonly string[]): string[][] {
  const found: string[][] = [];
  let open: string[] | null = null;
  for (const sql of statements) {
    if (/^(BEGIN|START TRANSACTION)/.test(sql)) found.push((open = []));
    open?.push(sql);
    if (/COMMIT\s*$/.test(sql)) open = null;
  }
  return found;
}

/**
 * The turn write path's statements per execute (bench:execute prints the same count): a
 * follow-on execute is the planner's reads, then two transactions, adding the turn and
 * settling it. The agent context was read by the first execute and is kept a few seconds
 * (contexts/context-cache.ts); on MySQL the planner's two reads (session, recent turns) are
 * one round trip. The turn is added in one more, against the session as the planner read it
 * (no locking read; TurnLifecycle.addTurnAsSeen). The settling is one more: the instance
 * that added the turn settles it as it wrote it (no locking read; TurnLifecycle.settleAsWritten),
 * every write, the status event and COMMIT together, so
 * the event counter row, which every turn change passes, is locked for no round trip. The org
 * has no webhook endpoint, which the first execute's outbox read found: the settling has no
 * webhook INSERT … SELECT. A new session is created with its first
 * turn in one transaction (on MySQL one round trip, with nothing to read first).
 */
function statementsSuite(database: 'sqlite' | 'mysql', expected: { total: number; perTransaction: [number, number] }): void {
  let h: TestGateway;
  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database, hooks: { sweeper: false, webhookSender: false } });
  });
  afterAll(() => h.close());

  it(`runs ${expected.total} statements for a follow-on execute, ${expected.perTransaction.join(' and ')} in its two transactions`, async () => {
    const first = await h.execute(alice, { instruction: 'hello', activeFiles: [{ path: 'a.ts', content: 'a' }] });
    const sessionId = first.body.data!.execute.sessionId;
    // A new session: its creation with its first turn, then the settling; on MySQL the first is one round trip.
    await waitUntil(() => transactions(h.statements).length >= 2 && /COMMIT\s*$/.test(h.statements.at(-1) ?? ''));
    const [start, firstSettle] = transactions(h.statements).slice(-2);
    expect(start?.join('\n')).toMatch(/INSERT INTO agent_sessions[\s\S]*INSERT INTO agent_session_turns/);
    // The session is inserted with its first turn counted: nothing updates it in the same transaction.
    expect(start?.join('\n')).not.toMatch(/UPDATE agent_sessions/);
    expect(firstSettle).toBeDefined();
    if (database === 'mysql') expect(start).toHaveLength(1);
    h.statements.length = 0;
    const next = await h.execute(alice, { instruction: 'again', sessionId, activeFiles: [{ path: 'a.ts', content: 'b' }] });
    expect(next.body.errors).toBeUndefined();
    await waitUntil(() => transactions(h.statements).length >= 2 && /COMMIT\s*$/.test(h.statements.at(-1) ?? ''));
    // Live subscriptions' background reads of the event log are not the execute's.
    const statements = h.statements.filter((sql) => !/^SELECT\b.*\b(turn_events|event_counters|org_event_counters)\b/s.test(sql));
    const [addTurn, settle] = transactions(statements);
    expect([addTurn?.length, settle?.length]).toEqual(expected.perTransaction);
    expect(statements).toHaveLength(expected.total);
    if (database === 'mysql') {
      const [reads] = statements;
      for (const table of ['agent_sessions', 'agent_session_turns']) expect(reads).toContain(`FROM ${table}`);
    }
    for (const tx of [addTurn!, settle!]) {
      const counter = tx.findIndex((sql) => /event_counters/.test(sql));
      // The event id is taken last: right before (MySQL: together with) the COMMIT.
      expect(tx.length - counter).toBeLessThanOrEqual(database === 'mysql' ? 1 : 3);
    }
  });
}

describe('turn write statements on embedded SQLite', () => statementsSuite('sqlite', { total: 15, perTransaction: [7, 6] }));
describeWithMysql('turn write statements on MySQL/MariaDB', () => statementsSuite('mysql', { total: 3, perTransaction: [1, 1] }));

/** A write that fails inside the final batch (writes + event + COMMIT) leaves nothing behind. */
function rollbackSuite(open: () => Promise<TestDatabase>): void {
  let t: TestDatabase;
  let store: SessionStore;
  beforeAll(async () => {
    t = await open();
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => {} } });
  });
  afterAll(() => t.dispose());

  it('rolls back a turn whose insert fails: no counter move, no event, the next turn still gets the next number', async () => {
    const session = await store.lifecycle.createSession(alice, { name: 'Rollback', agentContextId: 'ac-1' });
    const first = await store.lifecycle.addTurn(alice, session.id, { instructionSummary: 'one' });
    const events = async () => Number((await t.db.dataSource.query<{ last_id: number }[]>("SELECT last_id FROM org_event_counters WHERE org_id = 'acme'"))[0]?.last_id);
    const before = await events();
    await expect(store.lifecycle.addTurn(alice, session.id, { id: first.id, instructionSummary: 'same id' })).rejects.toThrow();
    expect(await events()).toBe(before);
    expect((await store.reads.getSession(alice, session.id))?.turnCount).toBe(1);
    const second = await store.lifecycle.addTurn(alice, session.id, { instructionSummary: 'two' });
    expect(second.sequenceNumber).toBe(2);
    expect(await events()).toBe(before + 1);
  });
}

describe('a failed turn write on embedded SQLite', () => rollbackSuite(sqliteTestDatabase));
describeWithMysql('a failed turn write on MySQL/MariaDB', () => rollbackSuite(mysqlTestDatabase));

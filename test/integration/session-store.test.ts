import { DomainError } from '../../src/domain/errors';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice, bob, boss, carol, mallory, user } from '../support/testkit/users';

const zoe = user('zoe');

/**
 * The SQL store's reads, batch reads and session commands (resolver ports with one adapter,
 * on both databases). What the orchestrator needs of every store is test/contracts/turn-store.
 */
function storeSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let store: SessionStore;

  beforeAll(async () => {
    t = await open();
  });
  afterAll(async () => t.dispose());
  beforeEach(() => {
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => {} } });
  });

  const newSession = (caller = alice, extra: Partial<Parameters<SessionStore['lifecycle']['createSession']>[1]> = {}) =>
    store.lifecycle.createSession(caller, { name: 'Refactor auth', agentContextId: 'ac-1', ...extra });

  const completion = (text = 'done') => ({
    agentAnswerSummary: text,
    fullAgentAnswerUrl: '/blobs/x',
    openAIResponseId: 'resp_1',
    openAIResponseReceivedDate: new Date(),
  });

  it('makes whoever adds a turn a participant, owner first', async () => {
    const session = await newSession(alice, { isPublic: true });
    await store.lifecycle.addTurn(bob, session.id, { instructionSummary: 'hello' });
    await store.lifecycle.addTurn(bob, session.id, { instructionSummary: 'again' });
    const participants = await store.batch.participantsOf(alice, [session.id]);
    expect(participants.get(session.id)?.map((p) => p.id)).toEqual(['alice', 'bob']);
    const forOther = await store.reads.listSessionsForUser(alice, 'bob', { first: 10, after: null });
    expect(forOther.items.map((s) => s.id)).toContain(session.id);
  });

  it('lists the owner first even when someone joined in the same millisecond', async () => {
    // zoe's session, carol's turn, one clock reading: by user id carol would sort first.
    const instant = new Date('2030-01-01T00:00:00.000Z');
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: () => {} }, now: () => instant });
    const session = await store.lifecycle.createSession(zoe, { name: 'Same instant', agentContextId: 'ac-1', isPublic: true });
    await store.lifecycle.addTurn(carol, session.id, { instructionSummary: 'hello' });
    const participants = await store.batch.participantsOf(zoe, [session.id]);
    expect(participants.get(session.id)?.map((p) => p.id)).toEqual(['zoe', 'carol']);
  });

  it('answers another org exactly like a missing session, for queries and session commands too', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(alice, session.id, { instructionSummary: 'q' });
    expect(await store.reads.getSession(mallory, session.id)).toBeNull();
    expect(await store.reads.getTurn(mallory, session.id, turn.id)).toBeNull();
    expect(await store.reads.getLastTurn(mallory, session.id)).toBeNull();
    for (const attempt of [
      () => store.lifecycle.updateSession(mallory, session.id, { name: 'mine now' }),
      () => store.lifecycle.deleteSession(mallory, session.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await store.reads.getTurn(alice, session.id, turn.id))?.status).toBe('PENDING');
  });

  it('hides private sessions from other members but not from admins; deletes softly', async () => {
    const session = await newSession();
    expect(await store.reads.getSession(bob, session.id)).toBeNull();
    expect(await store.reads.getSession(boss, session.id)).not.toBeNull();
    await expect(store.lifecycle.updateSession(bob, session.id, { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await store.lifecycle.updateSession(alice, session.id, { isPublic: true });
    expect(await store.reads.getSession(bob, session.id)).not.toBeNull();
    await expect(store.lifecycle.deleteSession(bob, session.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await store.lifecycle.deleteSession(alice, session.id)).toBe(true);
    expect(await store.reads.getSession(alice, session.id)).toBeNull();
    expect((await store.reads.getSession(boss, session.id))?.isDeleted).toBe(true);
    await expect(store.lifecycle.addTurn(boss, session.id, { instructionSummary: 'x' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('rejects bad input with BAD_USER_INPUT and writes nothing', async () => {
    const before = await store.reads.listSessions(alice, {}, 'CREATED_DESC', { first: 100, after: null });
    await expect(newSession(alice, { name: 'n'.repeat(201) })).rejects.toBeInstanceOf(DomainError);
    await expect(newSession(alice, { name: '   ' })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    const after = await store.reads.listSessions(alice, {}, 'CREATED_DESC', { first: 100, after: null });
    expect(await after.totalCount()).toBe(await before.totalCount());
    const s = await newSession();
    await expect(store.lifecycle.updateSession(alice, s.id, { name: 'n'.repeat(201) })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    expect((await store.reads.getSession(alice, s.id))?.name).toBe('Refactor auth');
  });

  it('pages turns of several sessions in one statement, with and without a status', async () => {
    const s1 = await newSession();
    const s2 = await newSession();
    for (let i = 0; i < 5; i++) await store.lifecycle.addTurn(alice, s1.id, { instructionSummary: `s1-${i}` });
    const t2 = await store.lifecycle.addTurn(alice, s2.id, { instructionSummary: 's2-0' });
    await store.lifecycle.completeTurn(alice, s2.id, t2.id, completion());
    t.statements.length = 0;
    const page = await store.batch.turnsOf(alice, [s1.id, s2.id], { afterSequence: 1, limit: 3, status: null });
    expect(t.statements).toHaveLength(1);
    expect(page.get(s1.id)?.map((x) => x.sequenceNumber)).toEqual([2, 3, 4]);
    expect(page.get(s2.id)).toEqual([]);
    const completed = await store.batch.turnsOf(alice, [s1.id, s2.id], { afterSequence: 0, limit: 3, status: 'COMPLETED' });
    expect(completed.get(s2.id)?.map((x) => x.id)).toEqual([t2.id]);
    expect(completed.get(s1.id)).toEqual([]);
  });

  it('reads one session by hand exactly as the batch read hydrates it, for whoever may see it', async () => {
    const s = await newSession(alice, { isPublic: false, workspaceId: 'ws', repo: 'r', defaultLanguage: 'ts', conversationContextId: 'cc-1' });
    const turn = await store.lifecycle.addTurn(alice, s.id, { instructionSummary: 'q' });
    await store.lifecycle.completeTurn(alice, s.id, turn.id, completion());
    for (const caller of [alice, boss]) {
      const [batched] = await store.batch.sessionsByIds(caller, [s.id]);
      expect(batched).toBeDefined();
      expect(await store.reads.getSession(caller, s.id)).toEqual(batched);
    }
    expect(await store.reads.getSession(mallory, s.id)).toBeNull();
    expect(await store.reads.getSession(bob, s.id)).toBeNull();
  });

  it("reads the planner's recent turns with exactly the chain and file fields of the whole turns, in one statement", async () => {
    const s = await newSession();
    for (let i = 0; i < 4; i++) {
      const turn = await store.lifecycle.addTurn(alice, s.id, {
        instructionSummary: `q${i}`,
        chunkRefs: [{ chunkId: `c${i}`, path: 'a.ts', startLine: 1, endLine: 2, contentHash: 'h', score: 0.5, fileContentHash: null }],
        activeFileRefs: [{ path: 'a.ts', contentHash: `f${i}`, sizeBytes: 10 + i, isTouched: true, wasSentToLLM: true, wasTooLargeToSend: false }],
      });
      await store.lifecycle.completeTurn(alice, s.id, turn.id, { ...completion(), openAIResponseId: `resp_${i}`, openAIChainExpiresDate: new Date(Date.now() + 60_000) });
    }
    const session = (await store.reads.getSession(alice, s.id))!;
    t.statements.length = 0;
    const slim = await store.batch.chainTurnsAfter(alice, session.id, 0, 3);
    expect(t.statements).toHaveLength(1);
    const whole = await store.lifecycle.recentTurns(alice, session, 3);
    expect(whole.map((x) => x.sequenceNumber)).toEqual([2, 3, 4]);
    expect(slim).toEqual(
      whole.map((x) => ({
        id: x.id,
        sequenceNumber: x.sequenceNumber,
        status: x.status,
        conversationId: x.conversationId,
        openAIResponseId: x.openAIResponseId,
        previousOpenAIResponseId: x.previousOpenAIResponseId,
        openAIChainExpiresDate: x.openAIChainExpiresDate,
        activeFileRefs: x.activeFileRefs,
        chunkRefs: x.chunkRefs,
      })),
    );
    expect(slim[2]?.activeFileRefs[0]?.sizeBytes).toBe(13);
    // Only turns after a sequence number, the newest of them when there are more than asked for.
    expect((await store.batch.chainTurnsAfter(alice, session.id, 2, 3)).map((x) => x.sequenceNumber)).toEqual([3, 4]);
    expect((await store.batch.chainTurnsAfter(alice, session.id, 1, 2)).map((x) => x.sequenceNumber)).toEqual([3, 4]);
    expect(await store.batch.chainTurnsAfter(alice, session.id, 4, 3)).toEqual([]);
    expect(await store.batch.chainTurnsAfter(mallory, session.id, 0, 3)).toEqual([]);
  });
}

describe('session queries and commands on embedded SQLite', () => storeSuite(sqliteTestDatabase));
describeWithMysql('session queries and commands on MySQL/MariaDB', () => storeSuite(mysqlTestDatabase));

import { DomainError } from '../../src/domain/errors';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { admin, user } from '../support/callers';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';

const owner = user('owner');
const other = user('other');
const stranger = user('owner', 'globex');

function storeSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  let store: SessionStore;
  let events: TurnStatusEvent[];

  beforeAll(async () => {
    t = await open();
  });
  afterAll(async () => t.dispose());
  beforeEach(() => {
    events = [];
    store = createSessionStore({ db: t.db, events: { turnStatusChanged: (e) => events.push(e) } });
  });

  const newSession = (caller = owner, extra: Partial<Parameters<SessionStore['lifecycle']['createSession']>[1]> = {}) =>
    store.lifecycle.createSession(caller, { name: 'Refactor auth', agentContextId: 'ac-1', ...extra });

  const completion = (text = 'done') => ({
    agentAnswerSummary: text,
    fullAgentAnswerUrl: '/blobs/x',
    openAIResponseId: 'resp_1',
    openAIResponseReceivedDate: new Date(),
  });

  it('gives 50 concurrent add-turn calls on one session exactly the sequence numbers 1..50', async () => {
    const session = await newSession();
    const writers = Array.from({ length: 50 }, (_, i) => (i % 2 ? owner : admin()));
    const turns = await Promise.all(
      writers.map((w, i) => store.lifecycle.addTurn(w, session.id, { instructionSummary: `instruction ${i}` })),
    );
    expect(turns.map((x) => x.sequenceNumber).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    const after = await store.reads.getSession(owner, session.id);
    expect(after?.turnCount).toBe(50);
    expect(after?.lastTurnStatus).toBe('PENDING');
    const last = await store.reads.getLastTurn(owner, session.id);
    expect(last?.sequenceNumber).toBe(50);
    // One PENDING event per turn, with dense ids: no gaps for a resuming reader to wait on.
    // (Hand-off after commit may reorder them; the live sequencer restores the order.)
    const ids = events.map((e) => e.eventId).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => ids[0]! + i));
    const byTurn = new Map(events.map((e) => [e.turnId, e.eventId]));
    const byCommit = [...turns].sort((a, b) => byTurn.get(a.id)! - byTurn.get(b.id)!);
    expect(byCommit.map((x) => x.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('creates PENDING turns with a summary cut at 1024 characters and a status timestamp equal to creation', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'x'.repeat(5000), mode: 'edit' });
    expect(turn.status).toBe('PENDING');
    expect(turn.instructionSummary).toHaveLength(1024);
    expect(turn.statusTimeStamp.getTime()).toBe(turn.creationDate.getTime());
    expect(turn.mode).toBe('edit');
    expect(turn.createdByUser).toEqual({ id: 'owner', text: 'Name of owner' });
  });

  it('completes a turn once; a second complete or fail is CONFLICT and changes nothing', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'q' });
    const received = new Date(Date.now() + 1000);
    const done = await store.lifecycle.completeTurn(owner, session.id, turn.id, {
      ...completion('the answer'),
      openAIResponseReceivedDate: received,
      warnings: ['w1'],
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, estimatedCostUsd: 0.01, isEstimated: false },
    });
    expect(done.status).toBe('COMPLETED');
    expect(done.statusTimeStamp.getTime()).toBe(received.getTime());
    expect(done.agentAnswerSummary).toBe('the answer');

    await expect(store.lifecycle.completeTurn(owner, session.id, turn.id, completion('other'))).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(store.lifecycle.failTurn(owner, session.id, turn.id, { errors: ['boom'] })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    const stored = await store.reads.getTurn(owner, session.id, turn.id);
    expect(stored).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'the answer', errors: [], warnings: ['w1'] });
    const s = await store.reads.getSession(owner, session.id);
    expect(s).toMatchObject({ turnCount: 1, lastTurnStatus: 'COMPLETED' });
    expect(s?.lastTurnDate?.getTime()).toBe(received.getTime());
    expect(s?.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 0, estimatedCostUsd: 0.01, isEstimated: false });
    expect(events.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'PENDING'],
      ['PENDING', 'COMPLETED'],
    ]);
  });

  it('fails a turn with errors and no answer, and never mutates it again', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'q', warnings: ['early'] });
    const failed = await store.lifecycle.failTurn(owner, session.id, turn.id, { errors: ['provider said no'], warnings: ['late'] });
    expect(failed).toMatchObject({
      status: 'FAILED',
      errors: ['provider said no'],
      warnings: ['early', 'late'],
      agentAnswerSummary: null,
      fullAgentAnswerUrl: null,
    });
    await expect(store.lifecycle.cancelTurn(owner, session.id, turn.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await store.reads.getSession(owner, session.id))?.lastTurnStatus).toBe('FAILED');
  });

  it('cancels a PENDING turn; cancelling again is a no-op that records no second event', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(other, (await newSession(other)).id, { instructionSummary: 'q' });
    await expect(store.lifecycle.cancelTurn(owner, turn.sessionId, turn.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const mine = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'q' });
    const first = await store.lifecycle.cancelTurn(owner, session.id, mine.id);
    const second = await store.lifecycle.cancelTurn(owner, session.id, mine.id);
    expect(first.status).toBe('CANCELLED');
    expect(second.statusTimeStamp.getTime()).toBe(first.statusTimeStamp.getTime());
    expect(events.filter((e) => e.turnId === mine.id).map((e) => e.status)).toEqual(['PENDING', 'CANCELLED']);
    await expect(store.lifecycle.completeTurn(owner, session.id, mine.id, completion())).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('keeps the last-turn status of the session on the highest sequence number', async () => {
    const session = await newSession();
    const a = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'a' });
    const b = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'b' });
    await store.lifecycle.completeTurn(owner, session.id, b.id, completion());
    await store.lifecycle.failTurn(owner, session.id, a.id, { errors: ['late failure of an older turn'] });
    const s = await store.reads.getSession(owner, session.id);
    expect(s).toMatchObject({ turnCount: 2, lastTurnStatus: 'COMPLETED' });
  });

  it('makes whoever adds a turn a participant, owner first', async () => {
    const session = await newSession(owner, { isPublic: true });
    await store.lifecycle.addTurn(other, session.id, { instructionSummary: 'hello' });
    await store.lifecycle.addTurn(other, session.id, { instructionSummary: 'again' });
    const participants = await store.batch.participantsOf(owner, [session.id]);
    expect(participants.get(session.id)?.map((p) => p.id)).toEqual(['owner', 'other']);
    const forOther = await store.reads.listSessionsForUser(owner, 'other', { first: 10, after: null });
    expect(forOther.items.map((s) => s.id)).toContain(session.id);
  });

  it('answers another org exactly like a missing session, for reads and writes', async () => {
    const session = await newSession();
    const turn = await store.lifecycle.addTurn(owner, session.id, { instructionSummary: 'q' });
    expect(await store.reads.getSession(stranger, session.id)).toBeNull();
    expect(await store.reads.getTurn(stranger, session.id, turn.id)).toBeNull();
    expect(await store.reads.getLastTurn(stranger, session.id)).toBeNull();
    for (const attempt of [
      () => store.lifecycle.addTurn(stranger, session.id, { instructionSummary: 'x' }),
      () => store.lifecycle.completeTurn(stranger, session.id, turn.id, completion()),
      () => store.lifecycle.updateSession(stranger, session.id, { name: 'mine now' }),
      () => store.lifecycle.deleteSession(stranger, session.id),
      () => store.lifecycle.cancelTurn(stranger, session.id, turn.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await store.reads.getTurn(owner, session.id, turn.id))?.status).toBe('PENDING');
  });

  it('hides private sessions from other members but not from admins; deletes softly', async () => {
    const session = await newSession();
    expect(await store.reads.getSession(other, session.id)).toBeNull();
    expect(await store.reads.getSession(admin(), session.id)).not.toBeNull();
    await expect(store.lifecycle.updateSession(other, session.id, { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await store.lifecycle.updateSession(owner, session.id, { isPublic: true });
    expect(await store.reads.getSession(other, session.id)).not.toBeNull();
    await expect(store.lifecycle.deleteSession(other, session.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await store.lifecycle.deleteSession(owner, session.id)).toBe(true);
    expect(await store.reads.getSession(owner, session.id)).toBeNull();
    expect((await store.reads.getSession(admin(), session.id))?.isDeleted).toBe(true);
    await expect(store.lifecycle.addTurn(admin(), session.id, { instructionSummary: 'x' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('rejects bad input with BAD_USER_INPUT and writes nothing', async () => {
    const before = await store.reads.listSessions(owner, {}, 'CREATED_DESC', { first: 100, after: null });
    await expect(newSession(owner, { name: 'n'.repeat(201) })).rejects.toBeInstanceOf(DomainError);
    await expect(newSession(owner, { name: '   ' })).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    const after = await store.reads.listSessions(owner, {}, 'CREATED_DESC', { first: 100, after: null });
    expect(await after.totalCount()).toBe(await before.totalCount());
    const s = await newSession();
    await expect(store.lifecycle.updateSession(owner, s.id, { name: 'n'.repeat(201) })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    expect((await store.reads.getSession(owner, s.id))?.name).toBe('Refactor auth');
  });

  it('refuses a new turn on a busy session when asked to', async () => {
    const s = await newSession();
    await store.lifecycle.addTurn(owner, s.id, { instructionSummary: 'first' });
    await expect(
      store.lifecycle.addTurn(owner, s.id, { instructionSummary: 'second' }, { rejectIfBusy: true }),
    ).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    expect((await store.reads.getSession(owner, s.id))?.turnCount).toBe(1);
  });

  it('pages turns of several sessions in one statement, with and without a status', async () => {
    const s1 = await newSession();
    const s2 = await newSession();
    for (let i = 0; i < 5; i++) await store.lifecycle.addTurn(owner, s1.id, { instructionSummary: `s1-${i}` });
    const t2 = await store.lifecycle.addTurn(owner, s2.id, { instructionSummary: 's2-0' });
    await store.lifecycle.completeTurn(owner, s2.id, t2.id, completion());
    t.statements.length = 0;
    const page = await store.batch.turnsOf(owner, [s1.id, s2.id], { afterSequence: 1, limit: 3, status: null });
    expect(t.statements).toHaveLength(1);
    expect(page.get(s1.id)?.map((x) => x.sequenceNumber)).toEqual([2, 3, 4]);
    expect(page.get(s2.id)).toEqual([]);
    const completed = await store.batch.turnsOf(owner, [s1.id, s2.id], { afterSequence: 0, limit: 3, status: 'COMPLETED' });
    expect(completed.get(s2.id)?.map((x) => x.id)).toEqual([t2.id]);
    expect(completed.get(s1.id)).toEqual([]);
  });
}

describe('session store on embedded SQLite', () => storeSuite(sqliteTestDatabase));
describeWithMysql('session store on MySQL/MariaDB', () => storeSuite(mysqlTestDatabase));

import type { Caller } from '../../src/domain/caller';
import type { TurnCompletion } from '../../src/domain/turn';
import type { TurnStatusEvent } from '../../src/events/turn-events';
import type { TurnLeases, TurnStore } from '../../src/sessions/session-store.port';
import { alice, bob, boss, mallory, TestClock } from '../support/testkit';

/** One adapter of the TurnStore and TurnLeases ports, opened for a suite. */
export interface TurnStoreSubject {
  readonly turns: TurnStore;
  readonly leases: TurnLeases;
  /** The status events published so far, in publication order. */
  events(): readonly TurnStatusEvent[];
  dispose(): Promise<void>;
}

/** Opens the adapter on `clock` (leases and timestamps follow it). */
export type TurnStoreFactory = (clock: TestClock) => Promise<TurnStoreSubject>;

const completion = (text = 'done'): TurnCompletion => ({
  agentAnswerSummary: text,
  fullAgentAnswerUrl: '/blobs/x',
  openAIResponseId: 'resp_1',
  openAIResponseReceivedDate: new Date(),
});

/**
 * What every session store must do for the orchestrator (DD-002, leases), whatever keeps
 * the sessions: run against each adapter, as graphql-ws runs one suite against every socket.
 */
export function turnStoreContract(open: TurnStoreFactory): void {
  const clock = new TestClock();
  let subject: TurnStoreSubject;
  let turns: TurnStore;
  let leases: TurnLeases;

  beforeAll(async () => {
    subject = await open(clock);
    ({ turns, leases } = subject);
  });
  afterAll(() => subject.dispose());

  const newSession = (caller: Caller = alice) => turns.createSession(caller, { name: 'Refactor auth', agentContextId: 'ac-1' });
  const eventsOf = (sessionId: string) => subject.events().filter((e) => e.sessionId === sessionId);

  it('gives 50 concurrent add-turn calls on one session exactly the sequence numbers 1..50', async () => {
    const session = await newSession();
    const writers = Array.from({ length: 50 }, (_, i) => (i % 2 ? alice : boss));
    const added = await Promise.all(writers.map((w, i) => turns.addTurn(w, session.id, { instructionSummary: `instruction ${i}` })));
    expect(added.map((x) => x.sequenceNumber).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await turns.getSession(alice, session.id)).toMatchObject({ turnCount: 50, lastTurnStatus: 'PENDING' });
    // One PENDING event per turn, with dense ids: no gaps for a resuming reader to wait on.
    // (Hand-off after commit may reorder them; the live sequencer restores the order.)
    const events = eventsOf(session.id);
    const ids = events.map((e) => e.eventId).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => ids[0]! + i));
    const byTurn = new Map(events.map((e) => [e.turnId, e.eventId]));
    const byCommit = [...added].sort((a, b) => byTurn.get(a.id)! - byTurn.get(b.id)!);
    expect(byCommit.map((x) => x.sequenceNumber)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('creates PENDING turns with a summary cut at 1024 characters and a status timestamp equal to creation', async () => {
    const session = await newSession();
    const turn = await turns.addTurn(alice, session.id, { instructionSummary: 'x'.repeat(5000), mode: 'edit' });
    expect(turn).toMatchObject({ status: 'PENDING', mode: 'edit', sequenceNumber: 1, createdByUser: { id: 'alice', text: 'Name of alice' } });
    expect(turn.instructionSummary).toHaveLength(1024);
    expect(turn.statusTimeStamp.getTime()).toBe(turn.creationDate.getTime());
    expect(await turns.getTurn(alice, session.id, turn.id)).toMatchObject({ id: turn.id, status: 'PENDING' });
  });

  it('starts a session with its first turn as one change: the owner takes part, the turn is number 1, one PENDING event', async () => {
    const id = `started-${Math.random().toString(36).slice(2)}`;
    const turn = await turns.startSession(alice, { id, name: 'Started', agentContextId: 'ac-1' }, { instructionSummary: 'first' }, { rejectIfBusy: true });
    expect(turn).toMatchObject({ sessionId: id, sequenceNumber: 1, status: 'PENDING' });
    expect(await turns.getSession(alice, id)).toMatchObject({
      ownerUser: { id: 'alice' },
      turnCount: 1,
      lastTurnStatus: 'PENDING',
      lastTurnDate: turn.creationDate,
      lastUpdatedDate: turn.creationDate,
    });
    expect(await turns.getSession(bob, id)).toBeNull();
    expect(eventsOf(id).map((e) => [e.turnId, e.previousStatus, e.status])).toEqual([[turn.id, null, 'PENDING']]);
    // The owner is a participant already: the next turn adds no second participant row.
    await turns.completeTurn(alice, id, turn.id, completion());
    expect(await turns.addTurn(alice, id, { instructionSummary: 'second' })).toMatchObject({ sequenceNumber: 2 });
  });

  it('stores neither the session nor the turn when the first turn is refused', async () => {
    const id = `refused-${Math.random().toString(36).slice(2)}`;
    await expect(turns.startSession(alice, { id, name: 'Refused', agentContextId: 'ac-1' }, { instructionSummary: 'x', mode: '' })).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    expect(await turns.getSession(alice, id)).toBeNull();
    expect(eventsOf(id)).toEqual([]);
  });

  it('completes a turn once; a second complete or fail is CONFLICT and changes nothing', async () => {
    const session = await newSession();
    const turn = await turns.addTurn(alice, session.id, { instructionSummary: 'q' });
    const received = new Date(Date.now() + 1000);
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15, estimatedCostUsd: 0.01, isEstimated: false };
    const done = await turns.completeTurn(alice, session.id, turn.id, { ...completion('the answer'), openAIResponseReceivedDate: received, warnings: ['w1'], usage });
    expect(done).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'the answer' });
    expect(done.statusTimeStamp.getTime()).toBe(received.getTime());

    await expect(turns.completeTurn(alice, session.id, turn.id, completion('other'))).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(turns.failTurn(alice, session.id, turn.id, { errors: ['boom'] })).rejects.toMatchObject({ code: 'CONFLICT' });
    const stored = await turns.getTurn(alice, session.id, turn.id);
    expect(stored).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'the answer', errors: [], warnings: ['w1'] });
    const s = await turns.getSession(alice, session.id);
    expect(s).toMatchObject({ turnCount: 1, lastTurnStatus: 'COMPLETED', usage });
    expect(s?.lastTurnDate?.getTime()).toBe(received.getTime());
    expect(eventsOf(session.id).map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'PENDING'],
      ['PENDING', 'COMPLETED'],
    ]);
  });

  it('fails a turn with errors and no answer, and never changes it again', async () => {
    const session = await newSession();
    const turn = await turns.addTurn(alice, session.id, { instructionSummary: 'q', warnings: ['early'] });
    const failed = await turns.failTurn(alice, session.id, turn.id, { errors: ['provider said no'], warnings: ['late'] });
    expect(failed).toMatchObject({ status: 'FAILED', errors: ['provider said no'], warnings: ['early', 'late'], agentAnswerSummary: null, fullAgentAnswerUrl: null });
    await expect(turns.cancelTurn(alice, session.id, turn.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await turns.getSession(alice, session.id))?.lastTurnStatus).toBe('FAILED');
  });

  it('cancels a PENDING turn; cancelling again is a no-op that records no second event', async () => {
    const session = await newSession();
    const bobs = await turns.addTurn(bob, (await newSession(bob)).id, { instructionSummary: 'q' });
    await expect(turns.cancelTurn(alice, bobs.sessionId, bobs.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const mine = await turns.addTurn(alice, session.id, { instructionSummary: 'q' });
    const first = await turns.cancelTurn(alice, session.id, mine.id);
    const second = await turns.cancelTurn(alice, session.id, mine.id);
    expect(first.status).toBe('CANCELLED');
    expect(second.statusTimeStamp.getTime()).toBe(first.statusTimeStamp.getTime());
    expect(eventsOf(session.id).map((e) => e.status)).toEqual(['PENDING', 'CANCELLED']);
    await expect(turns.completeTurn(alice, session.id, mine.id, completion())).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('keeps the last-turn status of the session on the highest sequence number', async () => {
    const session = await newSession();
    const a = await turns.addTurn(alice, session.id, { instructionSummary: 'a' });
    const b = await turns.addTurn(alice, session.id, { instructionSummary: 'b' });
    await turns.completeTurn(alice, session.id, b.id, completion());
    await turns.failTurn(alice, session.id, a.id, { errors: ['late failure of an older turn'] });
    expect(await turns.getSession(alice, session.id)).toMatchObject({ turnCount: 2, lastTurnStatus: 'COMPLETED' });
    expect((await turns.recentTurns(alice, { id: session.id, turnCount: 2 }, 5)).map((t) => t.id)).toEqual([a.id, b.id]);
  });

  it('answers another org exactly like a missing session, for reads and writes', async () => {
    const session = await newSession();
    const turn = await turns.addTurn(alice, session.id, { instructionSummary: 'q' });
    expect(await turns.getSession(mallory, session.id)).toBeNull();
    expect(await turns.getTurn(mallory, session.id, turn.id)).toBeNull();
    for (const attempt of [
      () => turns.addTurn(mallory, session.id, { instructionSummary: 'x' }),
      () => turns.completeTurn(mallory, session.id, turn.id, completion()),
      () => turns.cancelTurn(mallory, session.id, turn.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    expect((await turns.getTurn(alice, session.id, turn.id))?.status).toBe('PENDING');
  });

  it('refuses a new turn on a busy session when asked to', async () => {
    const s = await newSession();
    await turns.addTurn(alice, s.id, { instructionSummary: 'first' });
    await expect(turns.addTurn(alice, s.id, { instructionSummary: 'second' }, { rejectIfBusy: true })).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    expect((await turns.getSession(alice, s.id))?.turnCount).toBe(1);
  });

  it('restarts the chain of a PENDING turn in place, without an event, and only while it is PENDING', async () => {
    const session = await newSession();
    const turn = await turns.addTurn(alice, session.id, { instructionSummary: 'q', warnings: ['early'] });
    const restart = {
      reason: 'LOST_BY_PROVIDER' as const,
      activeFileRefs: [],
      chunkRefs: [],
      requestMetadata: { retrievalPathPrefixes: ['ui'], skippedSnippets: [] },
      warnings: ['restarted'],
    };
    const restarted = await turns.restartTurnChain(alice, session.id, turn.id, restart);
    expect(restarted).toMatchObject({ status: 'PENDING', conversationId: turn.id, previousOpenAIResponseId: null, openAIChainRestartReason: 'LOST_BY_PROVIDER', warnings: ['early', 'restarted'] });
    expect(await turns.getTurn(alice, session.id, turn.id)).toMatchObject({ conversationId: turn.id, requestMetadata: { retrievalPathPrefixes: ['ui'] } });
    expect(eventsOf(session.id).map((e) => e.status)).toEqual(['PENDING']);
    await turns.completeTurn(alice, session.id, turn.id, completion());
    await expect(turns.restartTurnChain(alice, session.id, turn.id, restart)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('keeps the partial answer of a cancelled turn once, and refuses it for a turn that was not cancelled', async () => {
    const session = await newSession();
    const running = await turns.addTurn(alice, session.id, { instructionSummary: 'q' });
    await expect(turns.keepPartialAnswer(alice, session.id, running.id, { fullAgentAnswerUrl: '/a', agentAnswerSummary: 'a' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await turns.cancelTurn(alice, session.id, running.id);
    const kept = await turns.keepPartialAnswer(alice, session.id, running.id, { fullAgentAnswerUrl: '/partial', agentAnswerSummary: 'so far' });
    expect(kept).toMatchObject({ status: 'CANCELLED', fullAgentAnswerUrl: '/partial', agentAnswerSummary: 'so far' });
    await turns.keepPartialAnswer(alice, session.id, running.id, { fullAgentAnswerUrl: '/later', agentAnswerSummary: 'later' });
    expect(await turns.getTurn(alice, session.id, running.id)).toMatchObject({ fullAgentAnswerUrl: '/partial', agentAnswerSummary: 'so far' });
  });

  it('adds what a turn cancelled elsewhere spent to the turn and, by the difference, to its session', async () => {
    const session = await newSession();
    const done = await turns.addTurn(alice, session.id, { instructionSummary: 'first' });
    const spent = { inputTokens: 100, outputTokens: 10, totalTokens: 110, cachedInputTokens: 0, estimatedCostUsd: 0.5, isEstimated: false };
    await turns.completeTurn(alice, session.id, done.id, { ...completion('one'), usage: spent });
    const running = await turns.addTurn(alice, session.id, { instructionSummary: 'second' });
    await turns.cancelTurn(alice, session.id, running.id);
    const estimate = { inputTokens: 40, outputTokens: 8, totalTokens: 48, cachedInputTokens: 0, estimatedCostUsd: 0.25, isEstimated: true };
    const kept = await turns.keepPartialAnswer(alice, session.id, running.id, { fullAgentAnswerUrl: null, agentAnswerSummary: null, usage: estimate });
    expect(kept).toMatchObject({ status: 'CANCELLED', fullAgentAnswerUrl: null, usage: estimate });
    expect((await turns.getSession(alice, session.id))?.usage).toEqual({
      inputTokens: 140,
      outputTokens: 18,
      totalTokens: 158,
      cachedInputTokens: 0,
      estimatedCostUsd: 0.75,
      isEstimated: true,
    });
    // Told again, nothing is counted twice.
    await turns.keepPartialAnswer(alice, session.id, running.id, { fullAgentAnswerUrl: null, agentAnswerSummary: null, usage: estimate });
    expect((await turns.getSession(alice, session.id))?.usage.inputTokens).toBe(140);
  });

  it('renews only the leases the owner holds on PENDING turns, and sweeps a lapsed one exactly once', async () => {
    const owner = `instance-${Math.random().toString(36).slice(2)}`;
    const s = await newSession();
    const held = await turns.addTurn(alice, s.id, { instructionSummary: 'held' }, { lease: { owner, expiresAt: new Date(clock.now().getTime() + 60_000) } });
    const lapsing = await turns.addTurn(alice, s.id, { instructionSummary: 'lapsing' }, { lease: { owner, expiresAt: new Date(clock.now().getTime() + 1_000) } });
    const finished = await turns.addTurn(alice, s.id, { instructionSummary: 'finished' }, { lease: { owner, expiresAt: new Date(clock.now().getTime() + 60_000) } });
    await turns.completeTurn(alice, s.id, finished.id, completion());

    expect(await leases.renewLeases(owner, [held.id, finished.id], new Date(clock.now().getTime() + 120_000))).toEqual([finished.id]);
    expect(await leases.renewLeases('another-instance', [held.id], new Date(clock.now().getTime() + 120_000))).toEqual([held.id]);

    clock.advance(5_000);
    const expired = (await leases.expiredTurns(1000)).filter((t) => t.sessionId === s.id);
    expect(expired).toEqual([{ orgId: 'acme', sessionId: s.id, turnId: lapsing.id, waitingForToolResults: false }]);
    const swept = await turns.failExpiredTurn(expired[0]!, { errors: ['the instance running the turn stopped'] });
    expect(swept).toMatchObject({ status: 'FAILED', errors: ['the instance running the turn stopped'] });
    expect((await leases.expiredTurns(1000)).filter((t) => t.sessionId === s.id)).toEqual([]);
  });

  it('leaves a turn PENDING when its lease was renewed after the sweeper listed it', async () => {
    const owner = `instance-${Math.random().toString(36).slice(2)}`;
    const s = await newSession();
    const turn = await turns.addTurn(alice, s.id, { instructionSummary: 'slow' }, { lease: { owner, expiresAt: new Date(clock.now().getTime() + 1_000) } });
    clock.advance(2_000);
    const [listed] = (await leases.expiredTurns(1000)).filter((t) => t.turnId === turn.id);
    expect(await leases.renewLeases(owner, [turn.id], new Date(clock.now().getTime() + 60_000))).toEqual([]);
    expect(await turns.failExpiredTurn(listed!, { errors: ['too late'] })).toBeNull();
    expect((await turns.getTurn(alice, s.id, turn.id))?.status).toBe('PENDING');
  });

  it('lets a released lease lapse, so another instance settles the turn', async () => {
    const owner = `instance-${Math.random().toString(36).slice(2)}`;
    const s = await newSession();
    const turn = await turns.addTurn(alice, s.id, { instructionSummary: 'running' }, { lease: { owner, expiresAt: new Date(clock.now().getTime() + 60_000) } });
    expect((await leases.expiredTurns(1000)).some((t) => t.turnId === turn.id)).toBe(false);
    await leases.releaseLeases(owner);
    clock.advance(1_000);
    expect((await leases.expiredTurns(1000)).filter((t) => t.turnId === turn.id)).toHaveLength(1);
  });
}

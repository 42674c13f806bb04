import { userHeader } from '../../src/domain/caller';
import { openSession, checkSessionPatch } from '../../src/domain/session-rules';
import { rollUpSettledTurn, turnUsageDelta, withUsage } from '../../src/domain/session-usage';
import type { SessionRecord } from '../../src/domain/session';
import type { TurnRecord } from '../../src/domain/turn';
import {
  addChunkRefs,
  applyTransition,
  assertAcceptsTurn,
  checkCancel,
  checkNewTurn,
  keepPartialAnswer,
  openTurn,
  pauseForToolCalls,
  restartTurnChain,
  resumeWithToolResults,
  type TurnTransition,
} from '../../src/domain/turn-transitions';
import type { TurnStatus } from '../../src/domain/turn-status';
import type { TurnUsage } from '../../src/domain/usage';
import { admin, user } from '../support/testkit/users';

const owner = user('owner');
const author = user('author');
const t0 = new Date('2030-01-01T10:00:00Z');
const t1 = new Date('2030-01-01T10:00:05Z');
const t2 = new Date('2030-01-01T10:00:09Z');

const usage = (inputTokens: number, outputTokens: number, estimatedCostUsd: number | null, isEstimated = false): TurnUsage => ({
  inputTokens,
  outputTokens,
  totalTokens: inputTokens + outputTokens,
  cachedInputTokens: 0,
  estimatedCostUsd,
  isEstimated,
});

const session = (extra: Partial<SessionRecord> = {}): SessionRecord => ({
  ...openSession(owner, { name: 'Refactor auth', agentContextId: 'ac-1' }, { id: 's-1', now: t0 }),
  ...extra,
});

const pending = (extra: Partial<TurnRecord> = {}): TurnRecord => ({
  ...openTurn(checkNewTurn({ instructionSummary: 'do it' }), { id: 't-1', session: { id: 's-1', orgId: 'acme', turnCount: 0 }, author: userHeader(author), now: t0 }),
  ...extra,
});

const completion = { agentAnswerSummary: 'the answer', fullAgentAnswerUrl: '/a', openAIResponseId: 'resp_1', openAIResponseReceivedDate: t1 };
const TRANSITIONS: Record<Exclude<TurnStatus, 'PENDING'>, TurnTransition> = {
  COMPLETED: { to: 'COMPLETED', completion },
  FAILED: { to: 'FAILED', failure: { errors: ['the provider failed'] } },
  CANCELLED: { to: 'CANCELLED', cancellation: { reason: 'Cancelled by Name of owner.' } },
};

describe('opening a turn (DD-002A)', () => {
  it('numbers it after the session\'s last turn, PENDING since its creation, with a summary of 1024 characters', () => {
    const turn = openTurn(checkNewTurn({ instructionSummary: 'x'.repeat(5000), mode: 'edit', chunkRefs: [] }), {
      id: 't-9',
      session: { id: 's-1', orgId: 'acme', turnCount: 8 },
      author: userHeader(author),
      now: t0,
    });
    expect(turn).toMatchObject({ id: 't-9', sequenceNumber: 9, status: 'PENDING', mode: 'edit', createdByUser: { id: 'author' }, usage: null });
    expect(turn.statusTimeStamp).toBe(t0);
    expect(turn.instructionSummary).toHaveLength(1024);
  });

  it('refuses an empty mode before anything else', () => {
    expect(() => checkNewTurn({ instructionSummary: 'q', mode: '  ' })).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it('refuses a deleted session, and a busy one when asked to', () => {
    expect(() => assertAcceptsTurn(session({ isDeleted: true }), {})).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    const busy = session({ lastTurnStatus: 'PENDING' });
    expect(() => assertAcceptsTurn(busy, {})).not.toThrow();
    expect(() => assertAcceptsTurn(busy, { rejectIfBusy: true })).toThrow(expect.objectContaining({ code: 'SESSION_BUSY', details: { sessionId: 's-1' } }));
  });
});

describe('turn transitions (DD-002B, DD-002C, cancellation)', () => {
  it('completes a PENDING turn with the answer, its arrival as status timestamp and its usage', () => {
    const done = applyTransition(pending({ warnings: ['w0'] }), { to: 'COMPLETED', completion: { ...completion, warnings: ['w1'], usage: usage(10, 5, 0.01) } }, t2);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      agentAnswerSummary: 'the answer',
      openAIResponseId: 'resp_1',
      openAIResponseReceivedDate: t1,
      statusTimeStamp: t1,
      warnings: ['w0', 'w1'],
      pendingToolCalls: [],
      usage: usage(10, 5, 0.01),
    });
  });

  it('fails a PENDING turn with its errors at the time observed, dropping any answer', () => {
    const failed = applyTransition(pending({ agentAnswerSummary: 'partial', openAIResponseId: 'resp_0' }), TRANSITIONS.FAILED, t2);
    expect(failed).toMatchObject({ status: 'FAILED', errors: ['the provider failed'], statusTimeStamp: t2, openAIResponseReceivedDate: t2, agentAnswerSummary: null, openAIResponseId: 'resp_0' });
  });

  it('cancels a PENDING turn, keeping the partial answer and the reason as a warning', () => {
    const cancelled = applyTransition(pending(), { to: 'CANCELLED', cancellation: { reason: 'stop', agentAnswerSummary: 'so far', fullAgentAnswerUrl: '/p' } }, t2);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', statusTimeStamp: t2, agentAnswerSummary: 'so far', fullAgentAnswerUrl: '/p', warnings: ['stop'] });
  });

  const refused = (['COMPLETED', 'FAILED', 'CANCELLED'] as const).flatMap((from) =>
    (['COMPLETED', 'FAILED', 'CANCELLED'] as const).filter((to) => !(from === 'CANCELLED' && to === 'CANCELLED')).map((to) => [from, to] as const),
  );
  it.each(refused)('never changes a %s turn into %s (CONFLICT)', (from, to) => {
    const terminal = applyTransition(pending(), TRANSITIONS[from], t1) as TurnRecord;
    expect(() => applyTransition(terminal, TRANSITIONS[to], t2)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });

  it('treats cancelling a CANCELLED turn as a no-op', () => {
    const cancelled = applyTransition(pending(), TRANSITIONS.CANCELLED, t1) as TurnRecord;
    expect(applyTransition(cancelled, TRANSITIONS.CANCELLED, t2)).toBeNull();
  });

  it.each(['COMPLETED', 'FAILED', 'CANCELLED'] as const)('leaves a %s turn immutable: no pause, no new chunks, no resume', (status) => {
    const terminal = applyTransition(pending(), TRANSITIONS[status], t1) as TurnRecord;
    const pause = { toolCalls: [{ toolCallId: 'c1', name: 'read_file', argumentsJson: '{}' }], openAIResponseId: 'r', openAIChainExpiresDate: t2, waitUntil: t2, usage: null, openAIRequestPayloadUrl: null, openAIResponsePayloadUrl: null };
    expect(() => pauseForToolCalls(terminal, pause)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(() => addChunkRefs(terminal, [])).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(() => resumeWithToolResults(terminal, [], null, t2)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });
});

describe('tool continuations (AGN-033)', () => {
  const calls = [
    { toolCallId: 'c1', name: 'read_file', argumentsJson: '{"path":"a"}' },
    { toolCallId: 'c2', name: 'read_file', argumentsJson: '{"path":"b"}' },
  ];
  const paused = () =>
    pauseForToolCalls(pending(), { toolCalls: calls, openAIResponseId: 'resp_tools', openAIChainExpiresDate: t2, waitUntil: t2, usage: usage(7, 3, null, true), openAIRequestPayloadUrl: '/req', openAIResponsePayloadUrl: '/res' });

  it('pauses a PENDING turn on the calls, keeping it PENDING with the round\'s usage', () => {
    expect(paused()).toMatchObject({ status: 'PENDING', pendingToolCalls: calls, openAIResponseId: 'resp_tools', usage: usage(7, 3, null, true) });
  });

  it('resumes only with exactly the calls it waits on, and only before its deadline', () => {
    expect(resumeWithToolResults(paused(), ['c1', 'c2'], t2, t1).pendingToolCalls).toEqual([]);
    for (const ids of [['c1'], ['c2', 'c1'], ['c1', 'c2', 'c3']]) {
      expect(() => resumeWithToolResults(paused(), ids, t2, t1)).toThrow(expect.objectContaining({ code: 'CONFLICT', details: { sessionId: 's-1', turnId: 't-1' } }));
    }
    expect(() => resumeWithToolResults(paused(), ['c1', 'c2'], t2, t2)).toThrow(/stopped waiting/);
    expect(() => resumeWithToolResults(pending(), [], null, t1)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });
});

describe('chunk refs found after the turn was added', () => {
  it('adds only chunks the turn does not have yet', () => {
    const ref = (chunkId: string) => ({ chunkId, path: 'a.ts', startLine: 1, endLine: 2, contentHash: `h-${chunkId}`, score: null });
    const { turn, added } = addChunkRefs(pending({ chunkRefs: [ref('a')] }), [ref('a'), ref('b'), ref('b')]);
    expect(added.map((c) => c.chunkId)).toEqual(['b']);
    expect(turn.chunkRefs.map((c) => c.chunkId)).toEqual(['a', 'b']);
    expect(addChunkRefs(turn, [ref('a')]).turn).toBe(turn);
  });
});

describe('chain restarts and partial answers (issue 10)', () => {
  const restart = {
    reason: 'LOST_BY_PROVIDER' as const,
    activeFileRefs: [],
    chunkRefs: [],
    requestMetadata: { retrievalPathPrefixes: ['ui'], skippedSnippets: [] },
    warnings: ['restarted'],
  };

  it('moves a PENDING turn onto a chain of its own and says why; a finished turn is CONFLICT', () => {
    const turn = pending({ conversationId: 'conv-old', previousOpenAIResponseId: 'resp_old', warnings: ['w'] });
    expect(restartTurnChain(turn, restart)).toMatchObject({
      conversationId: 't-1',
      previousOpenAIResponseId: null,
      openAIChainRestartReason: 'LOST_BY_PROVIDER',
      requestMetadata: { retrievalPathPrefixes: ['ui'] },
      warnings: ['w', 'restarted'],
    });
    const done = applyTransition(turn, TRANSITIONS.COMPLETED, t1)!;
    expect(() => restartTurnChain(done, restart)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });

  it('gives a cancelled turn its partial answer once, and nothing else', () => {
    const cancelled = applyTransition(pending(), TRANSITIONS.CANCELLED, t1)!;
    const kept = keepPartialAnswer(cancelled, { fullAgentAnswerUrl: '/answer', agentAnswerSummary: 'x'.repeat(2000) })!;
    expect(kept).toMatchObject({ status: 'CANCELLED', fullAgentAnswerUrl: '/answer' });
    expect(kept.agentAnswerSummary).toHaveLength(1024);
    expect(keepPartialAnswer(kept, { fullAgentAnswerUrl: '/other', agentAnswerSummary: 'y' })).toBeNull();
    expect(() => keepPartialAnswer(pending(), { fullAgentAnswerUrl: '/a', agentAnswerSummary: 'y' })).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });

  it('gives a cancelled turn the usage its interrupted round spent, with or without text, once', () => {
    const cancelled = applyTransition(pending(), TRANSITIONS.CANCELLED, t1)!;
    const usage = { inputTokens: 40, outputTokens: 3, totalTokens: 43, cachedInputTokens: 0, estimatedCostUsd: 0.01, isEstimated: true };
    const kept = keepPartialAnswer(cancelled, { fullAgentAnswerUrl: null, agentAnswerSummary: null, usage })!;
    expect(kept).toMatchObject({ status: 'CANCELLED', fullAgentAnswerUrl: null, usage });
    expect(keepPartialAnswer(kept, { fullAgentAnswerUrl: null, agentAnswerSummary: null, usage: { ...usage } })).toBeNull();
  });
});

describe('usage roll-up onto the session (spec 003)', () => {
  it('reads a turn without usage as zero tokens and no cost', () => {
    expect(turnUsageDelta(pending())).toEqual({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, estimatedCostUsd: null });
    expect(withUsage(pending(), null).usage).toBeNull();
  });

  it('recomputes the total of the usage it records', () => {
    expect(withUsage(pending(), { ...usage(4, 6, 0.5), totalTokens: 99 }).usage?.totalTokens).toBe(10);
  });

  it('adds a settled turn\'s usage and makes it the session\'s last turn', () => {
    const turn = applyTransition(pending({ sequenceNumber: 3 }), { to: 'COMPLETED', completion: { ...completion, usage: usage(100, 20, 0.25) } }, t2) as TurnRecord;
    const rolled = rollUpSettledTurn(session({ turnCount: 3, usage: usage(10, 2, null) }), turn);
    expect(rolled).toEqual({ lastUpdatedDate: t1, usage: usage(110, 22, 0.25), lastTurn: { status: 'COMPLETED', date: t1 } });
  });

  it('keeps an unknown cost unknown, sums known ones, and stays estimated once any turn was', () => {
    const failed = applyTransition(pending(), TRANSITIONS.FAILED, t2) as TurnRecord;
    expect(rollUpSettledTurn(session({ turnCount: 1 }), failed).usage).toEqual(usage(0, 0, null));
    expect(rollUpSettledTurn(session({ turnCount: 1, usage: usage(1, 1, 0.5, true) }), failed).usage).toEqual(usage(1, 1, 0.5, true));
    const estimated = withUsage(failed, usage(4, 4, 0.25, true));
    expect(rollUpSettledTurn(session({ turnCount: 1, usage: usage(1, 1, 0.5) }), estimated).usage).toEqual(usage(5, 5, 0.75, true));
  });

  it('leaves the last-turn facts alone when an older turn settles', () => {
    const older = applyTransition(pending({ sequenceNumber: 1 }), TRANSITIONS.FAILED, t2) as TurnRecord;
    expect(rollUpSettledTurn(session({ turnCount: 2 }), older).lastTurn).toBeNull();
  });
});

describe('who may cancel', () => {
  const theTurn = pending();
  it('lets the author, the session owner and an admin cancel; anyone else is FORBIDDEN', () => {
    for (const caller of [author, owner, admin()]) expect(checkCancel(caller, session(), theTurn)).toBe(theTurn);
    expect(() => checkCancel(user('bystander'), session(), theTurn)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('answers NOT_FOUND for a turn or session the caller cannot read, also to another org\'s admin', () => {
    expect(() => checkCancel(owner, null, theTurn)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => checkCancel(owner, session(), null)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => checkCancel(admin('boss', 'globex'), session(), theTurn)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  it('returns a CANCELLED turn as is and refuses a finished one', () => {
    const cancelled = applyTransition(theTurn, TRANSITIONS.CANCELLED, t1) as TurnRecord;
    expect(checkCancel(owner, session(), cancelled)).toBe(cancelled);
    for (const to of ['COMPLETED', 'FAILED'] as const) {
      const finished = applyTransition(theTurn, TRANSITIONS[to], t1) as TurnRecord;
      expect(() => checkCancel(owner, session(), finished)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    }
  });
});

describe('session rules', () => {
  it('opens a session owned by its creator, with nothing used yet', () => {
    expect(session()).toMatchObject({ ownerUser: { id: 'owner' }, ownerOrganization: { id: 'acme' }, turnCount: 0, isDeleted: false, usage: usage(0, 0, null) });
    expect(() => openSession(owner, { name: ' ', agentContextId: 'ac' }, { id: 's', now: t0 })).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it('patches only the fields given, and never clears name or isPublic', () => {
    expect(checkSessionPatch({ description: null })).toEqual({ description: null });
    expect(() => checkSessionPatch({ name: null })).toThrow(expect.objectContaining({ details: { field: 'name' } }));
    expect(() => checkSessionPatch({ isPublic: null })).toThrow(expect.objectContaining({ details: { field: 'isPublic' } }));
  });
});

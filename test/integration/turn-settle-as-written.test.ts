import type { TurnStatusEvent } from '../../src/events/turn-events';
import type { TurnCompletion } from '../../src/domain/turn';
import type { TurnUsage } from '../../src/domain/usage';
import { createSessionStore, type SessionStore } from '../../src/sessions/session-store';
import { mysqlTestDatabase, sqliteTestDatabase, type TestDatabase, type TestDatabaseFactory } from '../support/db';
import { describeWithMysql } from '../support/services';
import { alice } from '../support/testkit';

const usage = (inputTokens: number, estimatedCostUsd: number | null, isEstimated = false): TurnUsage => ({
  inputTokens,
  outputTokens: 2 * inputTokens,
  totalTokens: 3 * inputTokens,
  cachedInputTokens: 1,
  estimatedCostUsd,
  isEstimated,
});

const completion = (answer: string, turnUsage: TurnUsage | null, at = new Date()): TurnCompletion => ({
  agentAnswerSummary: answer,
  fullAgentAnswerUrl: null,
  openAIResponseId: `resp-${answer}`,
  openAIResponseReceivedDate: at,
  usage: turnUsage,
});

/**
 * The instance that wrote a turn last settles it without a locking read (one round trip on
 * MySQL), guarded on the turn's revision and rolling the session up where its totals stand.
 * Whatever happened to the turn or its session meanwhile, the result must be the locking
 * path's: writes from elsewhere kept, no turn settled twice, totals exact.
 */
function settleSuite(open: TestDatabaseFactory): void {
  let t: TestDatabase;
  /** `here` runs the turns; `elsewhere` is another instance on the same database. */
  let here: SessionStore;
  let elsewhere: SessionStore;
  const events: TurnStatusEvent[] = [];
  beforeAll(async () => {
    t = await open();
    here = createSessionStore({ db: t.db, events: { turnStatusChanged: (e) => events.push(e) } });
    elsewhere = createSessionStore({ db: t.db, events: { turnStatusChanged: (e) => events.push(e) } });
  });
  afterAll(() => t.dispose());

  const session = (name: string) => here.lifecycle.createSession(alice, { name, agentContextId: 'ac-1', isPublic: true });
  const read = async (id: string) => (await here.reads.getSession(alice, id))!;
  const statusesOf = (turnId: string) => events.filter((e) => e.turnId === turnId).map((e) => e.status);
  const lockingReads = () => t.statements.filter((sql) => /SELECT[\s\S]*FROM agent_sessions|SELECT[\s\S]*FROM agent_session_turns/.test(sql));

  it('settles a turn it wrote without reading it or its session, and rolls the session up as the locking path does', async () => {
    const [fast, locked] = [await session('Settled here'), await session('Settled elsewhere')];
    const runs = [
      { answer: 'one', usage: usage(10, 0.25), at: new Date('2026-11-24T08:00:01.125Z') },
      { answer: 'two', usage: usage(5, null, true), at: new Date('2026-11-24T08:00:02.250Z') },
      { answer: 'three', usage: null, at: new Date('2026-11-24T08:00:03.375Z') },
    ];
    for (const run of runs) {
      const mine = await here.lifecycle.addTurn(alice, fast.id, { instructionSummary: run.answer });
      t.statements.length = 0;
      const settled = await here.lifecycle.completeTurn(alice, fast.id, mine.id, completion(run.answer, run.usage, run.at));
      expect(lockingReads()).toEqual([]);
      expect(settled).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: run.answer });
      // The same turns settled by an instance that did not write them: the locking path.
      const theirs = await here.lifecycle.addTurn(alice, locked.id, { instructionSummary: run.answer });
      await elsewhere.lifecycle.completeTurn(alice, locked.id, theirs.id, completion(run.answer, run.usage, run.at));
    }
    const [a, b] = [await read(fast.id), await read(locked.id)];
    expect(a.usage).toEqual(b.usage);
    expect(a.usage).toMatchObject({ inputTokens: 15, outputTokens: 30, totalTokens: 45, cachedInputTokens: 2, estimatedCostUsd: 0.25, isEstimated: true });
    expect([a.turnCount, a.lastTurnStatus, a.lastTurnDate, a.lastUpdatedDate]).toEqual([3, 'COMPLETED', runs[2]!.at, runs[2]!.at]);
    expect([b.lastTurnStatus, b.lastTurnDate]).toEqual([a.lastTurnStatus, a.lastTurnDate]);
    const stored = await here.reads.getTurn(alice, fast.id, (await here.lifecycle.recentTurns(alice, a, 1))[0]!.id);
    expect(stored).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'three', openAIResponseId: 'resp-three' });
  });

  it('keeps what another instance wrote to the turn since (its chunk refs), by locking and deciding again', async () => {
    const s = await session('Written elsewhere');
    const turn = await here.lifecycle.addTurn(alice, s.id, { instructionSummary: 'retrieve' });
    const ref = { chunkId: 'c-1', path: 'src/a.ts', startLine: 1, endLine: 9, contentHash: 'h1', score: 0.5 };
    await elsewhere.lifecycle.recordChunkRefs(alice, s.id, turn.id, [ref]);
    const settled = await here.lifecycle.completeTurn(alice, s.id, turn.id, completion('done', usage(3, 0.5)));
    expect(settled.chunkRefs).toEqual([ref]);
    expect(await here.reads.getTurn(alice, s.id, turn.id)).toMatchObject({ status: 'COMPLETED', chunkRefs: [ref] });
    expect(statusesOf(turn.id)).toEqual(['PENDING', 'COMPLETED']);
    expect((await read(s.id)).usage).toMatchObject({ inputTokens: 3, estimatedCostUsd: 0.5 });
  });

  it('does not complete a turn cancelled elsewhere, nor count its usage twice', async () => {
    const s = await session('Cancelled elsewhere');
    const turn = await here.lifecycle.addTurn(alice, s.id, { instructionSummary: 'long' });
    await elsewhere.lifecycle.cancelTurn(alice, s.id, turn.id);
    await expect(here.lifecycle.completeTurn(alice, s.id, turn.id, completion('late', usage(7, 1)))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await here.reads.getTurn(alice, s.id, turn.id)).toMatchObject({ status: 'CANCELLED', agentAnswerSummary: null });
    expect(statusesOf(turn.id)).toEqual(['PENDING', 'CANCELLED']);
    expect(await read(s.id)).toMatchObject({ lastTurnStatus: 'CANCELLED', usage: { inputTokens: 0 } });
  });

  it("leaves the session's last turn to its newest turn when an older one settles last", async () => {
    const s = await session('Out of order');
    const older = await here.lifecycle.addTurn(alice, s.id, { instructionSummary: 'older' });
    const newer = await here.lifecycle.addTurn(alice, s.id, { instructionSummary: 'newer' });
    await here.lifecycle.failTurn(alice, s.id, newer.id, { errors: ['boom'] });
    const failedAt = (await read(s.id)).lastTurnDate;
    await here.lifecycle.completeTurn(alice, s.id, older.id, completion('older', usage(4, null)));
    expect(await read(s.id)).toMatchObject({ turnCount: 2, lastTurnStatus: 'FAILED', lastTurnDate: failedAt, usage: { inputTokens: 4 } });
  });

  it('adds up 20 turns of one session settled at once, exactly', async () => {
    const s = await session('Crowd');
    const turns = await Promise.all(Array.from({ length: 20 }, (_, i) => here.lifecycle.addTurn(alice, s.id, { instructionSummary: `turn ${i}` })));
    await Promise.all(turns.map((turn, i) => here.lifecycle.completeTurn(alice, s.id, turn.id, completion(`a${i}`, usage(i + 1, 0.125)))));
    expect((await read(s.id)).usage).toMatchObject({ inputTokens: 210, outputTokens: 420, cachedInputTokens: 20, estimatedCostUsd: 2.5 });
    expect((await read(s.id)).lastTurnStatus).toBe('COMPLETED');
    expect(events.filter((e) => e.sessionId === s.id && e.status === 'COMPLETED')).toHaveLength(20);
  });
}

describe('settling a turn as this instance wrote it, on embedded SQLite', () => settleSuite(sqliteTestDatabase));
describeWithMysql('settling a turn as this instance wrote it, on MySQL/MariaDB', () => settleSuite(mysqlTestDatabase));

import type { OrgScope } from '../../src/domain/caller';
import type { ChainTurn } from '../../src/domain/chain';
import { HISTORY_WINDOW } from '../../src/orchestrator/instruction-planner';
import { ChainHistoryCache } from '../../src/sessions/chain-history-cache';
import type { ChainTurnSource } from '../../src/sessions/session-store.port';
import { InMemoryTurnStore } from '../support/in-memory-ports';
import { alice } from '../support/testkit/users';

/** The store's reads as the cache asks for them; `hold` keeps the next reads unanswered until released. */
class CountedSource implements ChainTurnSource {
  readonly reads: { sessionId: string; afterSequence: number; rows: number }[] = [];
  private held: (() => void)[] | null = null;

  constructor(private readonly inner: ChainTurnSource) {}

  async chainTurnsAfter(scope: OrgScope, sessionId: string, afterSequence: number, limit: number): Promise<ChainTurn[]> {
    const rows = await this.inner.chainTurnsAfter(scope, sessionId, afterSequence, limit);
    if (this.held) await new Promise<void>((resolve) => this.held?.push(resolve));
    this.reads.push({ sessionId, afterSequence, rows: rows.length });
    return rows;
  }

  hold(): void {
    this.held = [];
  }

  /** Answers the held reads, last asked first. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const resolve of held.reverse()) resolve();
  }
}

describe('chain history cache', () => {
  let store: InMemoryTurnStore;
  let source: CountedSource;

  beforeEach(() => {
    store = new InMemoryTurnStore();
    source = new CountedSource(store);
  });

  const sessionWith = async (turns: number, files = 0): Promise<string> => {
    const session = await store.createSession(alice, { name: 'Cached', agentContextId: 'ac-1' });
    await addTurns(session.id, turns, files);
    return session.id;
  };

  const addTurns = async (sessionId: string, n: number, files = 0): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const activeFileRefs = Array.from({ length: files }, (_, k) => ({
        path: `f${k}.ts`,
        contentHash: `h${k}`,
        sizeBytes: 1,
        isTouched: true,
        wasSentToLLM: true,
        wasTooLargeToSend: false,
      }));
      const turn = await store.addTurn(alice, sessionId, { instructionSummary: 'q', activeFileRefs });
      await store.completeTurn(alice, sessionId, turn.id, {
        agentAnswerSummary: 'a',
        fullAgentAnswerUrl: null,
        openAIResponseId: `resp_${turn.sequenceNumber}`,
        openAIResponseReceivedDate: new Date(),
      });
    }
  };

  const uncached = (sessionId: string, limit = HISTORY_WINDOW) => store.chainTurnsAfter(alice, sessionId, 0, limit);

  it("caps the planner's window at its newest 200 turns, reading only the new ones", async () => {
    const cache = new ChainHistoryCache(source, { window: HISTORY_WINDOW, maxObjects: 10_000 });
    const sessionId = await sessionWith(205);
    const first = await cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    expect(first).toHaveLength(200);
    expect(first[0]?.sequenceNumber).toBe(6);
    await addTurns(sessionId, 3);
    const next = await cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    expect(next).toEqual(await uncached(sessionId));
    expect(next.map((t) => t.sequenceNumber)).toEqual(Array.from({ length: 200 }, (_, i) => i + 9));
    expect(source.reads.map(({ afterSequence, rows }) => ({ afterSequence, rows }))).toEqual([
      { afterSequence: 0, rows: 200 },
      { afterSequence: 205, rows: 3 },
    ]);
  });

  it('forgets the least recently planned sessions beyond its budget of turns and references, and reads them whole again', async () => {
    // Each session: 3 turns with 1 file each = 6 objects; the budget holds two sessions.
    const cache = new ChainHistoryCache(source, { window: HISTORY_WINDOW, maxObjects: 12 });
    const [one, two, three] = [await sessionWith(3, 1), await sessionWith(3, 1), await sessionWith(3, 1)];
    for (const id of [one, two, one, three, one, two]) await cache.chainTurns(alice, id, HISTORY_WINDOW);
    const after = (id: string) => source.reads.filter((r) => r.sessionId === id).map((r) => r.afterSequence);
    // three pushed out two (one was used since), two pushed out three.
    expect(after(one)).toEqual([0, 3, 3]);
    expect(after(two)).toEqual([0, 0]);
    expect(after(three)).toEqual([0]);
    expect(await cache.chainTurns(alice, three, HISTORY_WINDOW)).toEqual(await uncached(three));
    expect(after(three)).toEqual([0, 0]);
  });

  it('holds nothing of a session larger than its whole budget', async () => {
    const cache = new ChainHistoryCache(source, { window: HISTORY_WINDOW, maxObjects: 5 });
    const sessionId = await sessionWith(3, 1);
    await cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    expect(await cache.chainTurns(alice, sessionId, HISTORY_WINDOW)).toEqual(await uncached(sessionId));
    expect(source.reads.map((r) => r.afterSequence)).toEqual([0, 0]);
  });

  it('keeps the later of two reads of one session that finish out of order', async () => {
    const cache = new ChainHistoryCache(source, { window: HISTORY_WINDOW, maxObjects: 10_000 });
    const sessionId = await sessionWith(2);
    source.hold();
    const older = cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    await addTurns(sessionId, 2);
    const newer = cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    await new Promise((resolve) => setImmediate(resolve));
    source.release();
    expect((await older).map((t) => t.sequenceNumber)).toEqual([1, 2]);
    expect((await newer).map((t) => t.sequenceNumber)).toEqual([1, 2, 3, 4]);
    await cache.chainTurns(alice, sessionId, HISTORY_WINDOW);
    expect(source.reads.at(-1)).toMatchObject({ afterSequence: 4, rows: 0 });
  });

  it('reads a window wider than its own whole, and holds nothing of it', async () => {
    const cache = new ChainHistoryCache(source, { window: 2, maxObjects: 10_000 });
    const sessionId = await sessionWith(3);
    expect(await cache.chainTurns(alice, sessionId, 3)).toEqual(await uncached(sessionId));
    expect(await cache.chainTurns(alice, sessionId, 2)).toEqual(await uncached(sessionId, 2));
    expect(source.reads.map((r) => r.afterSequence)).toEqual([0, 0]);
  });
});

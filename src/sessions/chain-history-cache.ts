import type { OrgScope } from '../domain/caller';
import type { ChainTurn } from '../domain/chain';
import { isTerminal } from '../domain/turn-status';
import type { ChainHistoryReader, ChainTurnSource } from './session-store.port';

export interface ChainHistoryCacheOptions {
  /** The most turns a read asks for (the planner's window); a read for more is not cached. */
  readonly window: number;
  /**
   * How many objects (turns, and their file and chunk references) the cache holds over all
   * sessions before it forgets the least recently planned ones: what memory it takes follows
   * the references more than the turns.
   */
  readonly maxObjects: number;
}

/** One session's newest settled turns, oldest first: from the window's oldest turn up to the first one still PENDING. */
interface Entry {
  readonly turns: readonly ChainTurn[];
  readonly objects: number;
}

/**
 * The planner's recent turns, read incrementally: every execute of a session asks for its
 * newest turns, and all but the last few are settled. A settled (terminal) turn's chain and
 * file fields are never written again (domain/turn-transitions.ts: only a PENDING turn
 * changes; a CANCELLED one keeps its partial answer and usage, nothing read here), so this
 * instance keeps them and reads only the turns numbered after the last settled one it holds:
 * new turns and those still PENDING, whichever instance wrote them, in one index range read
 * as before. Turns are never deleted and a session's numbers only grow, so what it holds plus
 * what it reads is the newest window. Entries are keyed by org and session, and filled only
 * from reads scoped to that org; a session the caller cannot see is refused by the session
 * read whatever its turns are (the planner drops them).
 */
export class ChainHistoryCache implements ChainHistoryReader {
  /** In order of use, least recent first. */
  private readonly entries = new Map<string, Entry>();
  private objects = 0;

  constructor(
    private readonly source: ChainTurnSource,
    private readonly options: ChainHistoryCacheOptions,
  ) {}

  chainTurns(scope: OrgScope, sessionId: string, limit: number): Promise<ChainTurn[]> {
    const { window } = this.options;
    if (limit > window) return this.source.chainTurnsAfter(scope, sessionId, 0, limit);
    const key = JSON.stringify([scope.orgId, sessionId]);
    const held = this.entries.get(key)?.turns ?? [];
    // Asked for before any await: the read joins the session read's batch (Database.read).
    const fresh = this.source.chainTurnsAfter(scope, sessionId, settledThrough(held), window);
    return fresh.then((read) => {
      const turns = read.length >= window ? read : [...held, ...read].slice(-window);
      this.keep(key, turns);
      return turns.slice(-limit);
    });
  }

  /** Holds the settled start of `turns`, unless a read that finished first holds more of them. */
  private keep(key: string, turns: readonly ChainTurn[]): void {
    const pending = turns.findIndex((t) => !isTerminal(t.status));
    const settled = pending === -1 ? turns : turns.slice(0, pending);
    const current = this.entries.get(key);
    if (current) {
      if (settledThrough(current.turns) > settledThrough(settled)) return;
      this.forget(key, current);
    }
    const objects = settled.reduce((n, t) => n + 1 + t.activeFileRefs.length + t.chunkRefs.length, 0);
    if (settled.length === 0 || objects > this.options.maxObjects) return;
    this.entries.set(key, { turns: settled, objects });
    this.objects += objects;
    for (const [oldest, entry] of this.entries) {
      if (this.objects <= this.options.maxObjects) break;
      this.forget(oldest, entry);
    }
  }

  private forget(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.objects -= entry.objects;
  }
}

const settledThrough = (turns: readonly ChainTurn[]): number => turns.at(-1)?.sequenceNumber ?? 0;

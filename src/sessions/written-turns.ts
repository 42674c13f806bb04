import type { TurnRecord } from '../domain/turn';

/** A PENDING turn as this instance last wrote it, and the revision that write left on its row. */
export interface WrittenTurn {
  readonly turn: TurnRecord;
  readonly revision: number;
}

/**
 * The PENDING turns this instance wrote last, so that settling one (nearly always by the
 * instance that runs it) needs no locking read first. Only a hint: the settle is guarded on
 * the revision, so a turn written anywhere since (another instance, a write whose outcome
 * was lost with its connection) falls back to the locking path. Bounded, oldest out first:
 * a turn that never settles here (resumed on another instance, say) is simply forgotten.
 */
export class WrittenTurns {
  private readonly turns = new Map<string, WrittenTurn>();

  constructor(private readonly capacity = 10_000) {}

  remember(turn: TurnRecord, revision: number): void {
    const key = keyOf(turn.orgId, turn.id);
    this.turns.delete(key);
    if (turn.status !== 'PENDING') return;
    this.turns.set(key, { turn, revision });
    if (this.turns.size > this.capacity) {
      const oldest = this.turns.keys().next();
      if (!oldest.done) this.turns.delete(oldest.value);
    }
  }

  forget(orgId: string, turnId: string): void {
    this.turns.delete(keyOf(orgId, turnId));
  }

  /** The turn as last written here, now forgotten: its taker settles it or falls back. */
  take(orgId: string, sessionId: string, turnId: string): WrittenTurn | null {
    const key = keyOf(orgId, turnId);
    const found = this.turns.get(key);
    this.turns.delete(key);
    return found?.turn.sessionId === sessionId ? found : null;
  }
}

const keyOf = (orgId: string, turnId: string): string => `${orgId}\n${turnId}`;

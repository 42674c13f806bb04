import type { Caller } from '../domain/caller';
import type { TurnRecord } from '../domain/turn';
import type { Logger } from '../logger.port';
import type { TurnLeases } from '../sessions/session-store.port';

/** Why a running provider call was stopped. */
export type AbortReason =
  /** cancelTurn on this instance. */
  | 'cancel'
  /** The gateway is shutting down. */
  | 'shutdown'
  /** This instance no longer holds the turn: it was cancelled elsewhere or swept. */
  | 'lost';

/** One turn whose provider call runs in this instance. */
export class InFlightTurn {
  readonly controller = new AbortController();
  /** Answer text streamed so far (the partial answer a cancel keeps). */
  text = '';
  /** Deltas written to the output stream so far, this turn included earlier rounds. */
  deltas: number;
  reason: AbortReason | null = null;
  /**
   * Set once the provider round is over and its outcome could not be stored yet (the store
   * was away): aborted, like the round itself, by shutdown or a lost lease.
   */
  settling: AbortController | null = null;
  private cancelSettled = false;
  private cancellation: { caller: Caller; settle: (outcome: TurnRecord | Error) => void; promise: Promise<TurnRecord> } | null = null;

  constructor(
    readonly orgId: string,
    readonly sessionId: string,
    readonly turnId: string,
    firstDeltaIndex: number,
  ) {
    this.deltas = firstDeltaIndex;
  }

  abort(reason: AbortReason): void {
    this.settling?.abort();
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.controller.abort();
  }

  /** Stops the call for `caller`; resolves with the turn as the runner leaves it (CANCELLED). */
  requestCancel(caller: Caller): Promise<TurnRecord> {
    if (!this.cancellation) {
      let settle!: (outcome: TurnRecord | Error) => void;
      const promise = new Promise<TurnRecord>((resolve, reject) => {
        settle = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
      });
      this.cancellation = { caller, settle, promise };
      this.abort('cancel');
    }
    return this.cancellation.promise;
  }

  /** Who asked to cancel, while the request is unanswered. */
  get cancelledBy(): Caller | null {
    return this.cancellation?.caller ?? null;
  }

  /** True while a cancel request waits for its answer. */
  get cancelPending(): boolean {
    return this.cancellation !== null && !this.cancelSettled;
  }

  settleCancel(outcome: TurnRecord | Error): void {
    if (!this.cancellation || this.cancelSettled) return;
    this.cancelSettled = true;
    this.cancellation.settle(outcome);
  }
}

/**
 * The turns this instance is running: their abort controllers (cancellation, shutdown) and
 * their leases, which a timer renews; a turn whose lease is found gone (cancelled on another
 * instance, or swept) is aborted here too.
 */
export class InFlightTurns {
  private readonly turns = new Map<string, InFlightTurn>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly deps: {
      readonly leases: Pick<TurnLeases, 'renewLeases'>;
      readonly owner: string;
      readonly leaseMs: number;
      readonly logger: Logger;
      readonly now: () => Date;
    },
  ) {}

  get size(): number {
    return this.turns.size;
  }

  leaseUntil(): Date {
    return new Date(this.deps.now().getTime() + this.deps.leaseMs);
  }

  register(orgId: string, sessionId: string, turnId: string, firstDeltaIndex: number): InFlightTurn {
    const turn = new InFlightTurn(orgId, sessionId, turnId, firstDeltaIndex);
    this.turns.set(turnId, turn);
    return turn;
  }

  release(turnId: string): void {
    this.turns.delete(turnId);
  }

  /**
   * The turn whose provider call runs here, only when it belongs to this org and session
   * (ids come from clients). A turn only waiting to be stored is not running: null.
   */
  find(orgId: string, sessionId: string, turnId: string): InFlightTurn | null {
    const turn = this.turns.get(turnId);
    return turn && !turn.settling && turn.orgId === orgId && turn.sessionId === sessionId ? turn : null;
  }

  /** True while this instance works on the turn (its call runs, or its outcome waits to be stored). */
  holds(turnId: string): boolean {
    return this.turns.has(turnId);
  }

  /** Renews every lease this often; cross-instance cancellation is noticed at the same pace. */
  start(intervalMs = Math.min(2000, Math.max(100, Math.floor(this.deps.leaseMs / 3)))): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  abortAll(reason: AbortReason): void {
    for (const turn of this.turns.values()) turn.abort(reason);
  }

  /** Resolves once no turn runs here any more, or after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.turns.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.turns.size === 0) return;
    this.ticking = true;
    try {
      const lost = await this.deps.leases.renewLeases(this.deps.owner, [...this.turns.keys()], this.leaseUntil());
      for (const id of lost) this.turns.get(id)?.abort('lost');
    } catch (e) {
      this.deps.logger.warn({ err: e }, 'could not renew turn leases');
    } finally {
      this.ticking = false;
    }
  }
}

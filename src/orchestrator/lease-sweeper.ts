import type { TurnOutputSink } from '../events/turn-output.port';
import type { IdempotencyKeyStore } from '../idempotency/idempotency.port';
import type { Logger } from '../logger.port';
import type { TurnLeases, TurnStore } from '../sessions/session-store.port';

const BATCH = 50;

/**
 * Nothing lost on faults: any live instance periodically fails PENDING turns whose lease ran
 * out, through the turn store (so the FAILED event is recorded and published): turns whose
 * gateway died ("interrupted") and continuations whose client never sent tool results.
 * It also forgets idempotency keys past their retention.
 */
export class LeaseSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private next: Promise<number> | null = null;

  constructor(
    private readonly deps: {
      readonly sessions: Pick<TurnStore, 'failExpiredTurn'>;
      readonly leases: Pick<TurnLeases, 'expiredTurns'>;
      readonly idempotencyKeys: Pick<IdempotencyKeyStore, 'purgeExpired'>;
      readonly output: TurnOutputSink;
      readonly toolResultTimeoutSeconds: number;
      readonly logger: Logger;
      /** Turns this instance still works on: their lease lapsed only because the database was away, and is renewed. */
      readonly workingOn: (turnId: string) => boolean;
    },
  ) {}

  start(intervalMs: number): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.sweep().catch((e: unknown) => this.deps.logger.warn({ err: e }, 'turn sweep failed'));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * A pass that starts no earlier than this call; returns how many turns it failed. A pass
   * already running may have read the leases before the call, so one more follows it, shared
   * by every call made meanwhile.
   */
  sweep(): Promise<number> {
    if (!this.running) return this.startPass();
    this.next ??= this.running
      .catch(() => 0)
      .then(() => {
        this.next = null;
        return this.startPass();
      });
    return this.next;
  }

  private startPass(): Promise<number> {
    const pass: Promise<number> = this.pass().finally(() => {
      if (this.running === pass) this.running = null;
    });
    this.running = pass;
    return pass;
  }

  private async pass(): Promise<number> {
    let failed = 0;
    for (const turn of await this.deps.leases.expiredTurns(BATCH)) {
      if (this.deps.workingOn(turn.turnId)) continue;
      const error = turn.waitingForToolResults
        ? `no tool results arrived within ${this.deps.toolResultTimeoutSeconds} seconds`
        : 'interrupted: the gateway instance running this turn stopped before it finished';
      try {
        if (await this.deps.sessions.failExpiredTurn(turn, { errors: [error] })) {
          failed++;
          this.deps.output.end(turn);
        }
      } catch (e) {
        // Another instance's sweeper or the turn's owner got there first.
        this.deps.logger.debug({ err: e, turnId: turn.turnId }, 'expired turn already settled');
      }
    }
    await this.deps.idempotencyKeys.purgeExpired();
    return failed;
  }
}

import type { Logger } from '../logger';
import type { EventBus } from './event-bus.port';
import type { TurnEventRepository } from './turn-event.repository';
import type { TurnStatusEvent } from './turn-events';

export interface SequencerOptions {
  /** How long an out-of-order event waits for the ones before it before they are read from the database. */
  readonly gapWaitMs?: number;
  /** While anyone listens, how often the database is asked whether events were committed that never arrived. */
  readonly pollMs?: number;
}

type Listener = (event: TurnStatusEvent) => void;
const PAGE = 500;

/**
 * Turns what the bus delivers into the stream subscribers need: every committed status
 * event exactly once, in id order. Ids are dense and handed out in commit order (one
 * counter row, see event-log-writer.ts), so once event N has arrived every event below N
 * is committed: a missing one is a message that is late or was lost (another instance
 * publishing a moment later, a Redis outage). The sequencer waits briefly for it, then
 * reads it from turn_events; duplicates (our own echo, a replayed page) are dropped.
 *
 * A message lost with no later one to reveal the gap (its publisher's Redis connection was
 * down while ours was fine, or the publisher died right after its commit) is found by a poll
 * of the newest event id, every `pollMs` while anyone listens here.
 */
export class TurnEventSequencer {
  private last = 0;
  private readonly held = new Map<number, TurnStatusEvent>();
  private readonly byOrg = new Map<string, Set<Listener>>();
  private gapTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private filling: Promise<void> | null = null;
  private stopBus: (() => void)[] = [];
  private failing = false;
  private closed = false;
  private readonly gapWaitMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly bus: Pick<EventBus, 'onTurnStatus' | 'onResync'>,
    private readonly events: Pick<TurnEventRepository, 'latestId' | 'range'>,
    private readonly logger: Logger,
    options: SequencerOptions = {},
  ) {
    this.gapWaitMs = options.gapWaitMs ?? 100;
    this.pollMs = options.pollMs ?? 2_000;
  }

  /** Starts after the newest stored event: what happened before has no live subscriber here. */
  async start(): Promise<void> {
    this.stopBus = [this.bus.onTurnStatus((e) => this.receive(e)), this.bus.onResync(() => this.catchUp())];
    this.last = Math.max(this.last, await this.events.latestId());
    this.flushHeld();
    this.pollTimer = setInterval(() => {
      if (this.byOrg.size > 0) this.catchUp();
    }, this.pollMs);
    this.pollTimer.unref();
  }

  /** The id of the last event delivered to listeners. */
  get lastDelivered(): number {
    return this.last;
  }

  /** Events of one org, in order, from the next one on. */
  subscribe(orgId: string, listener: Listener): () => void {
    let listeners = this.byOrg.get(orgId);
    if (!listeners) this.byOrg.set(orgId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.byOrg.get(orgId) === listeners) this.byOrg.delete(orgId);
    };
  }

  close(): void {
    this.closed = true;
    for (const stop of this.stopBus) stop();
    if (this.gapTimer) clearTimeout(this.gapTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.gapTimer = null;
    this.pollTimer = null;
    this.byOrg.clear();
    this.held.clear();
  }

  private receive(event: TurnStatusEvent): void {
    if (event.eventId <= this.last || this.held.has(event.eventId)) return;
    this.held.set(event.eventId, event);
    this.flushHeld();
    if (this.held.size > 0 && !this.filling) this.scheduleCatchUp(this.gapWaitMs);
  }

  private flushHeld(): void {
    for (let next = this.held.get(this.last + 1); next; next = this.held.get(this.last + 1)) {
      this.held.delete(next.eventId);
      this.deliver(next);
    }
    for (const id of this.held.keys()) if (id <= this.last) this.held.delete(id);
  }

  /** Reads what is missing from turn_events, up to the newest stored event, and delivers it in order. */
  private catchUp(): void {
    if (this.filling || this.closed) return;
    this.filling = (async () => {
      try {
        const through = await this.events.latestId();
        while (this.last < through) {
          const page = await this.events.range(this.last, through, PAGE);
          if (page.length === 0) {
            // Pruned meanwhile (ids are otherwise dense): nothing left to wait for.
            this.logger.warn({ from: this.last + 1, through }, 'status events missing from turn_events; skipping them');
            this.last = through;
            break;
          }
          for (const event of page) {
            if (event.eventId <= this.last) continue;
            if (event.eventId !== this.last + 1) this.logger.warn({ missing: this.last + 1, next: event.eventId }, 'status event ids skipped');
            this.held.delete(event.eventId);
            this.deliver(event);
          }
          this.flushHeld();
        }
        if (this.failing) this.logger.info('missing status events read again');
        this.failing = false;
      } catch (e) {
        // Once per outage, not on every retry.
        if (!this.failing) this.logger.error({ err: e }, 'could not read missing status events; retrying');
        this.failing = true;
      } finally {
        this.filling = null;
        this.flushHeld();
        if (this.held.size > 0 || this.failing) this.scheduleCatchUp(this.gapWaitMs * 5);
      }
    })();
  }

  private scheduleCatchUp(delayMs: number): void {
    if (this.gapTimer || this.closed) return;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      this.catchUp();
    }, delayMs);
    this.gapTimer.unref();
  }

  private deliver(event: TurnStatusEvent): void {
    this.last = event.eventId;
    for (const listener of this.byOrg.get(event.orgId) ?? []) {
      try {
        listener(event);
      } catch (e) {
        this.logger.error({ err: e }, 'a status event listener failed');
      }
    }
  }
}

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
/** Orgs per counter read when catching up. */
const ORGS_PER_READ = 200;

/** One org's stream: the last id delivered, events that arrived early, who listens. */
interface OrgStream {
  last: number;
  readonly held: Map<number, TurnStatusEvent>;
  readonly listeners: Set<Listener>;
}

/**
 * Turns what the bus delivers into the stream subscribers need: every committed status
 * event exactly once, in id order, org by org. Each org's ids are dense and handed out in
 * commit order (the org's counter row, see event-log-writer.ts), so once the org's event N
 * has arrived every event of the org below N is committed: a missing one is a message that
 * is late or was lost (another instance publishing a moment later, a Redis outage). The
 * sequencer waits briefly for it, then reads it from turn_events; duplicates (our own echo,
 * a replayed page) are dropped.
 *
 * A message lost with no later one to reveal the gap (its publisher's Redis connection was
 * down while ours was fine, or the publisher died right after its commit) is found by a poll
 * of the newest event ids of the orgs someone listens to here, every `pollMs`.
 */
export class TurnEventSequencer {
  private readonly orgs = new Map<string, OrgStream>();
  /** Each org's last id when this instance started, until the org's stream is made. */
  private readonly startedAt = new Map<string, number>();
  /** Where an org without a sequence of its own stands (see event-log-writer.ts). */
  private floor = 0;
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
    private readonly events: Pick<TurnEventRepository, 'latestIds' | 'range'>,
    private readonly logger: Logger,
    options: SequencerOptions = {},
  ) {
    this.gapWaitMs = options.gapWaitMs ?? 100;
    this.pollMs = options.pollMs ?? 2_000;
  }

  /** Starts after the newest stored event of each org: what happened before has no live subscriber here. */
  async start(): Promise<void> {
    this.stopBus = [this.bus.onTurnStatus((e) => this.receive(e)), this.bus.onResync(() => this.catchUp())];
    const { byOrg, floor } = await this.events.latestIds();
    this.floor = floor;
    for (const [orgId, last] of byOrg) {
      const stream = this.orgs.get(orgId);
      if (stream) stream.last = Math.max(stream.last, last);
      else this.startedAt.set(orgId, last);
    }
    for (const stream of this.orgs.values()) {
      stream.last = Math.max(stream.last, floor);
      this.flushHeld(stream);
    }
    this.pollTimer = setInterval(() => {
      if (this.hasListeners()) this.catchUp();
    }, this.pollMs);
    this.pollTimer.unref();
  }

  /** Events of one org, in order, from the next one on. */
  subscribe(orgId: string, listener: Listener): () => void {
    const { listeners } = this.stream(orgId);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    for (const stop of this.stopBus) stop();
    if (this.gapTimer) clearTimeout(this.gapTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.gapTimer = null;
    this.pollTimer = null;
    this.orgs.clear();
    this.startedAt.clear();
  }

  private stream(orgId: string): OrgStream {
    let stream = this.orgs.get(orgId);
    if (!stream) {
      stream = { last: this.startedAt.get(orgId) ?? this.floor, held: new Map(), listeners: new Set() };
      this.orgs.set(orgId, stream);
      this.startedAt.delete(orgId);
    }
    return stream;
  }

  private hasListeners(): boolean {
    for (const stream of this.orgs.values()) if (stream.listeners.size > 0) return true;
    return false;
  }

  private receive(event: TurnStatusEvent): void {
    const stream = this.stream(event.orgId);
    if (event.eventId <= stream.last || stream.held.has(event.eventId)) return;
    stream.held.set(event.eventId, event);
    this.flushHeld(stream);
    if (stream.held.size > 0 && !this.filling) this.scheduleCatchUp(this.gapWaitMs);
  }

  private flushHeld(stream: OrgStream): void {
    for (let next = stream.held.get(stream.last + 1); next; next = stream.held.get(stream.last + 1)) {
      stream.held.delete(next.eventId);
      this.deliver(stream, next);
    }
    for (const id of stream.held.keys()) if (id <= stream.last) stream.held.delete(id);
  }

  /** Reads what is missing from turn_events, for the orgs listened to or waiting on a gap, and delivers it in order. */
  private catchUp(): void {
    if (this.filling || this.closed) return;
    // `finally` runs after the assignment even when there is nothing to read (no await inside).
    this.filling = this.readMissing().finally(() => {
      this.filling = null;
      let held = false;
      for (const stream of this.orgs.values()) {
        this.flushHeld(stream);
        held ||= stream.held.size > 0;
      }
      if (held || this.failing) this.scheduleCatchUp(this.gapWaitMs * 5);
    });
  }

  private async readMissing(): Promise<void> {
    try {
      const wanted = [...this.orgs].filter(([, s]) => s.listeners.size > 0 || s.held.size > 0).map(([orgId]) => orgId);
      for (let i = 0; i < wanted.length; i += ORGS_PER_READ) {
        const { byOrg, floor } = await this.events.latestIds(wanted.slice(i, i + ORGS_PER_READ));
        this.floor = Math.max(this.floor, floor);
        for (const [orgId, through] of byOrg) await this.fill(orgId, through);
      }
      if (this.failing) this.logger.info('missing status events read again');
      this.failing = false;
    } catch (e) {
      // Once per outage, not on every retry.
      if (!this.failing) this.logger.error({ err: e }, 'could not read missing status events; retrying');
      this.failing = true;
    }
  }

  /** Delivers the org's stored events up to `through` that have not been delivered yet. */
  private async fill(orgId: string, through: number): Promise<void> {
    const stream = this.stream(orgId);
    while (stream.last < through) {
      const page = await this.events.range(orgId, stream.last, through, PAGE);
      if (page.length === 0) {
        // Pruned meanwhile, or ids from before the org had a sequence of its own: nothing left to wait for.
        stream.last = through;
        break;
      }
      for (const event of page) {
        if (event.eventId <= stream.last) continue;
        if (event.eventId !== stream.last + 1) this.logger.warn({ orgId, missing: stream.last + 1, next: event.eventId }, 'status event ids skipped');
        stream.held.delete(event.eventId);
        this.deliver(stream, event);
      }
      this.flushHeld(stream);
    }
  }

  private scheduleCatchUp(delayMs: number): void {
    if (this.gapTimer || this.closed) return;
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      this.catchUp();
    }, delayMs);
    this.gapTimer.unref();
  }

  private deliver(stream: OrgStream, event: TurnStatusEvent): void {
    stream.last = event.eventId;
    for (const listener of stream.listeners) {
      try {
        listener(event);
      } catch (e) {
        this.logger.error({ err: e }, 'a status event listener failed');
      }
    }
  }
}

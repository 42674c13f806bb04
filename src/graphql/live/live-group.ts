import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Caller } from '../../domain/caller';
import { DomainError, isDomainError } from '../../domain/errors';
import { Loaders } from '../loaders';
import { EventShares } from './event-shares';
import type { LiveSource } from './live-source';

/**
 * Where one subscriber's messages go: one operation on one connection. The transport
 * implements it (src/server/ws-live-stream.ts, src/server/sse-server.ts): it frames the
 * serialised payload, bounds what it keeps for a client that does not read, and sends.
 */
export interface SubscriberSink {
  /** Sends a `next` message whose payload is this serialised result; `flushed` runs once it left the process (or never will). */
  next(payload: Buffer, flushed?: () => void): void;
  /** More is waiting to be sent than the transport likes: a catch-up waits for a flush before it sends more. */
  readonly congested: boolean;
  /** The stream is over: the transport sends `complete` and forgets the operation. */
  complete(): void;
}

/** A running subscription, as the transport holds it: it can only be cancelled. */
export interface LiveSubscription {
  /** The client completed the operation or went away: leave at once, send nothing more. */
  cancel(): void;
}

/** Turns one admitted event into the serialised result subscribers receive (an execution result, formatted). */
export type Transform<E> = (event: E, caller: Caller, loaders: Loaders) => Promise<Buffer>;

export interface LiveGroupOptions {
  /** The serialised last message a subscriber gets when its stream stops with an error. */
  readonly failure: (error: DomainError) => Buffer;
  /** Logs what broke when the group has to stop (the subscriber only sees a code). */
  readonly onError?: (error: unknown) => void;
  /** Called once the group has stopped (source ended, failed, or its last member left). */
  readonly onClosed?: () => void;
  /** Live results a member may hold back while its own catch-up runs before it is stopped. */
  readonly maxHeld?: number;
  /**
   * Members are of different viewers (their results are the same for every reader: see
   * viewer-independence.ts): each event is admitted for each member (the source's
   * `admitViewers`, from facts read once) and executed once, as one of the admitted members.
   */
  readonly anyViewer?: boolean;
  /** Where the groups of one gateway share each event's facts and loaders per caller; without it each group makes its own. */
  readonly shares?: EventShares;
}

const END = Symbol('end');
const DEFAULT_MAX_HELD = 1_000;
/** Members sent to in one go: a group of ten thousand must not keep the process from other work for the whole round. */
const SEND_BATCH = 2_000;

const unavailable = () => new DomainError('SERVICE_UNAVAILABLE', 'live delivery failed; resubscribe (with afterEventId) to continue');
const tooSlow = () =>
  new DomainError('SERVICE_UNAVAILABLE', 'the subscriber fell too far behind; resubscribe (with afterEventId) to continue');

/**
 * Subscribers that would see the same results share one group: the source is opened once,
 * and every live event is authorised, executed and serialised ONCE, with loaders made for
 * that event alone; the one payload goes to every member's sink. Members join at any time:
 * each first runs its own catch-up (replay, text so far) while the group's live results
 * wait for it, then continues live, skipping what its catch-up already covered, so nothing
 * is lost or repeated. Events are processed one at a time, in arrival order.
 */
export class LiveGroup<E> {
  private readonly members = new Set<Member<E>>();
  private readonly inbox: (E | typeof END)[] = [];
  private processing = false;
  private closed = false;
  private stopLive: (() => void) | null = null;
  private readonly opened: Promise<void>;
  readonly maxHeld: number;
  private readonly shares: EventShares;

  constructor(
    private readonly source: LiveSource<E>,
    readonly transform: Transform<E>,
    readonly options: LiveGroupOptions,
  ) {
    this.maxHeld = options.maxHeld ?? DEFAULT_MAX_HELD;
    this.shares = options.shares ?? new EventShares();
    this.opened = source.open({ next: (e) => this.enqueue(e), end: () => this.enqueue(END) }).then((stop) => {
      if (this.closed) stop();
      else this.stopLive = stop;
    });
    this.opened.catch((e: unknown) => this.stop(e));
  }

  get size(): number {
    return this.members.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A new subscriber; `own` is the source its subscribe call created (its catch-up and start position). */
  join(own: LiveSource<E>, sink: SubscriberSink): LiveSubscription {
    if (this.closed) throw new Error('cannot join a closed live group');
    const member = new Member<E>(this, own, sink);
    this.members.add(member);
    void member.start(this.opened);
    return member;
  }

  leave(member: Member<E>): void {
    this.members.delete(member);
    if (this.members.size === 0) this.close();
  }

  private enqueue(item: E | typeof END): void {
    if (this.closed) return;
    this.inbox.push(item);
    if (item !== END) this.shares.hold(item);
    if (this.processing) return;
    this.processing = true;
    // Later, not inside the publisher's call: a commit must not wait for the subscribers' work.
    setImmediate(() => void this.process());
  }

  private async process(): Promise<void> {
    try {
      while (this.inbox.length > 0 && !this.closed) {
        const item = this.inbox.shift() as E | typeof END;
        if (item === END) {
          for (const member of this.members) member.end();
          this.close();
          return;
        }
        try {
          if (this.options.anyViewer) await this.processForViewers(item);
          else await this.processForOne(item);
        } finally {
          this.shares.release(item);
        }
      }
    } catch (e) {
      this.stop(e);
    } finally {
      this.processing = false;
    }
  }

  /** One event for members who all see the same results (the source's caller's). */
  private async processForOne(item: E): Promise<void> {
    const loaders = this.shares.loaders(item, this.source.caller, this.source.services);
    const admission = await this.source.admit(item, loaders);
    if (this.closed || admission === 'skip') return;
    if (admission !== 'deliver') return this.stop(admission.stop);
    const payload = await this.transform(item, this.source.caller, loaders);
    if (this.closed) return;
    await this.deliver(this.source.position(item), payload);
  }

  /**
   * One event for members of different viewers: who may have it is decided per member (a
   * member who may not any more is stopped or skipped, as its stream's rule says), then it is
   * executed once, as the first admitted member, and the one payload goes to every admitted member.
   */
  private async processForViewers(item: E): Promise<void> {
    if (!this.source.admitViewers) throw new Error('a group of many viewers needs a source that admits each viewer');
    const decide = await this.source.admitViewers(item, this.shares);
    if (this.closed || decide === 'skip') return;
    const admitted: Member<E>[] = [];
    for (const member of this.members) {
      const admission = decide(member.caller);
      if (admission === 'deliver') admitted.push(member);
      else if (admission !== 'skip') member.fail(this.options.failure(admission.stop));
    }
    const [first] = admitted;
    if (!first) return;
    const loaders = this.shares.loaders(item, first.caller, this.source.services);
    const payload = await this.transform(item, first.caller, loaders);
    if (this.closed) return;
    await this.deliver(this.source.position(item), payload, admitted);
  }

  /** The same payload to every member (or those given), in batches; members that leave meanwhile are skipped, the next event waits. */
  private async deliver(position: number, payload: Buffer, to: ReadonlySet<Member<E>> | readonly Member<E>[] = this.members): Promise<void> {
    const total = 'size' in to ? to.size : to.length;
    let sent = 0;
    for (const member of to) {
      member.live(position, payload);
      if (++sent % SEND_BATCH === 0 && sent < total) await nextTurn();
    }
  }

  /** Ends every member with the error (a domain error as is, anything else masked) and closes. */
  private stop(error: unknown): void {
    if (this.closed) return;
    if (!isDomainError(error)) this.options.onError?.(error);
    const last = this.options.failure(isDomainError(error) ? error : unavailable());
    for (const member of this.members) member.fail(last);
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const item of this.inbox) if (item !== END) this.shares.release(item);
    this.inbox.length = 0;
    this.stopLive?.();
    this.stopLive = null;
    this.options.onClosed?.();
  }
}

/**
 * One subscriber of a group. Live payloads go straight to its sink; only while its own
 * catch-up runs are they held back (bounded). Once caught up it keeps nothing but its sink
 * and its position: what an idle subscriber costs.
 */
class Member<E> implements LiveSubscription {
  /** Who subscribed: a group of many viewers admits each event for each member. */
  readonly caller: Caller;
  /** Its own source, until its catch-up is done. */
  private source: LiveSource<E> | null;
  /** Live payloads that arrived during the catch-up; null once caught up. */
  private held: { position: number; payload: Buffer }[] | null = [];
  private after: number;
  private endedDuringCatchUp = false;
  private done = false;

  constructor(
    private readonly group: LiveGroup<E>,
    source: LiveSource<E>,
    private readonly sink: SubscriberSink,
  ) {
    this.source = source;
    this.caller = source.caller;
    this.after = source.startPosition;
  }

  async start(opened: Promise<void>): Promise<void> {
    try {
      await opened;
    } catch {
      // The group failed to open and has already ended every member with the reason.
      return;
    }
    const source = this.source;
    if (!source || this.done) return;
    try {
      for await (const event of source.catchUp()) {
        if (this.done) return;
        const position = source.position(event);
        if (position <= this.after) continue;
        const loaders = new Loaders(source.caller, source.services);
        const admission = await source.admit(event, loaders);
        if (this.done) return;
        this.after = position;
        if (admission === 'skip') continue;
        if (admission !== 'deliver') return this.fail(this.group.options.failure(admission.stop));
        const payload = await this.group.transform(event, source.caller, loaders);
        if (this.done) return;
        // A long replay goes out at the pace the client reads it.
        if (this.sink.congested) await new Promise<void>((flushed) => this.sink.next(payload, flushed));
        else this.sink.next(payload);
      }
    } catch (e) {
      if (!isDomainError(e)) this.group.options.onError?.(e);
      return this.fail(this.group.options.failure(isDomainError(e) ? e : unavailable()));
    }
    if (this.done) return;
    const held = this.held ?? [];
    this.held = null;
    this.source = null;
    for (const { position, payload } of held) this.live(position, payload);
    if (this.endedDuringCatchUp) this.end();
  }

  /** A payload of the group's live stream. */
  live(position: number, payload: Buffer): void {
    if (this.done) return;
    if (this.held) {
      this.held.push({ position, payload });
      if (this.held.length > this.group.maxHeld) this.fail(this.group.options.failure(tooSlow()));
      return;
    }
    if (position <= this.after) return;
    this.after = position;
    this.sink.next(payload);
  }

  /** The group's stream is over. */
  end(): void {
    if (this.done) return;
    if (this.held) {
      this.endedDuringCatchUp = true;
      return;
    }
    this.leave();
    this.sink.complete();
  }

  /** One last message, then complete. Whatever is held is dropped: the subscriber resumes from what it last received. */
  fail(last: Buffer): void {
    if (this.done) return;
    this.leave();
    this.sink.next(last);
    this.sink.complete();
  }

  cancel(): void {
    if (!this.done) this.leave();
  }

  private leave(): void {
    this.done = true;
    this.held = null;
    this.source = null;
    this.group.leave(this);
  }
}

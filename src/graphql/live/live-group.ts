import type { Caller } from '../../domain/caller';
import { DomainError, isDomainError } from '../../domain/errors';
import { createLoaders, type Loaders } from '../loaders';
import type { LiveSource } from './live-source';

/** Turns one admitted event into what subscribers receive (an execution result, or the event itself). */
export type Transform<E, R> = (event: E, caller: Caller, loaders: Loaders) => Promise<R>;

export interface LiveGroupOptions<R> {
  /** The last message a subscriber gets when its stream stops with an error; without it, `next()` rejects. */
  readonly failure?: (error: DomainError) => R;
  /** Logs what broke when the group has to stop (the subscriber only sees a code). */
  readonly onError?: (error: unknown) => void;
  /** Called once the group has stopped (source ended, failed, or its last member left). */
  readonly onClosed?: () => void;
  /** Results a subscriber may have waiting before it is considered too slow and stopped. */
  readonly maxQueued?: number;
}

const END = Symbol('end');
const DEFAULT_MAX_QUEUED = 1_000;
/** Catch-up pauses while this many results wait to be sent. */
const CATCH_UP_HIGH_WATER = 100;

const unavailable = () => new DomainError('SERVICE_UNAVAILABLE', 'live delivery failed; resubscribe (with afterEventId) to continue');
const tooSlow = () =>
  new DomainError('SERVICE_UNAVAILABLE', 'the subscriber fell too far behind; resubscribe (with afterEventId) to continue');

/**
 * Subscribers that would see the same results share one group: the source is opened once,
 * and every live event is authorised and transformed (executed) ONCE, with loaders made for
 * that event alone, and the one result goes to every member. Members join at any time:
 * each first runs its own catch-up (replay, text so far) while the group's live results
 * wait in its queue, then continues live, skipping what its catch-up already covered, so
 * nothing is lost or repeated. Events are processed one at a time, in arrival order.
 */
export class LiveGroup<E, R> {
  private readonly members = new Set<Member<E, R>>();
  private readonly inbox: (E | typeof END)[] = [];
  private processing = false;
  private closed = false;
  private stopLive: (() => void) | null = null;
  private readonly opened: Promise<void>;

  constructor(
    private readonly source: LiveSource<E>,
    readonly transform: Transform<E, R>,
    readonly options: LiveGroupOptions<R> = {},
  ) {
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
  join(own: LiveSource<E>): Member<E, R> {
    if (this.closed) throw new Error('cannot join a closed live group');
    const member = new Member<E, R>(this, own);
    this.members.add(member);
    void member.start(this.opened);
    return member;
  }

  leave(member: Member<E, R>): void {
    this.members.delete(member);
    if (this.members.size === 0) this.close();
  }

  private enqueue(item: E | typeof END): void {
    if (this.closed) return;
    this.inbox.push(item);
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
          for (const member of this.members) member.end(null);
          this.close();
          return;
        }
        const loaders = createLoaders(this.source.caller, this.source.services);
        const admission = await this.source.admit(item, loaders);
        if (this.closed || admission === 'skip') continue;
        if (admission !== 'deliver') {
          this.stop(admission.stop);
          return;
        }
        const result = await this.transform(item, this.source.caller, loaders);
        if (this.closed) return;
        const position = this.source.position(item);
        for (const member of this.members) member.live(position, result);
      }
    } catch (e) {
      this.stop(e);
    } finally {
      this.processing = false;
    }
  }

  /** Ends every member with the error (a domain error as is, anything else masked) and closes. */
  private stop(error: unknown): void {
    if (this.closed) return;
    if (!isDomainError(error)) this.options.onError?.(error);
    const reason = isDomainError(error) ? error : unavailable();
    for (const member of this.members) member.fail(reason);
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.inbox.length = 0;
    this.stopLive?.();
    this.stopLive = null;
    this.options.onClosed?.();
  }
}

type Final<R> = { readonly value: R } | { readonly error: DomainError } | null;

/**
 * One subscriber's view of a group: an async iterator whose `return()` takes effect at once
 * (an async generator would wait for its next event before it noticed), so a client that
 * unsubscribes or disconnects leaves its group immediately.
 */
export class Member<E, R> implements AsyncIterableIterator<R> {
  private readonly ready: R[] = [];
  private held: { position: number; value: R }[] = [];
  private after: number;
  private catchingUp = true;
  private endedDuringCatchUp: { final: Final<R> } | null = null;
  private final: Final<R> | undefined;
  private done = false;
  private waiter: { resolve: (r: IteratorResult<R, undefined>) => void; reject: (e: unknown) => void } | null = null;
  private room: (() => void) | null = null;
  private readonly maxQueued: number;

  constructor(
    private readonly group: LiveGroup<E, R>,
    private readonly source: LiveSource<E>,
  ) {
    this.after = source.startPosition;
    this.maxQueued = group.options.maxQueued ?? DEFAULT_MAX_QUEUED;
  }

  async start(opened: Promise<void>): Promise<void> {
    try {
      await opened;
    } catch {
      // The group failed to open and has already ended every member with the reason.
      return;
    }
    try {
      for await (const event of this.source.catchUp()) {
        if (this.done) return;
        const position = this.source.position(event);
        if (position <= this.after) continue;
        const loaders = createLoaders(this.source.caller, this.source.services);
        const admission = await this.source.admit(event, loaders);
        if (this.done) return;
        this.after = position;
        if (admission === 'skip') continue;
        if (admission !== 'deliver') return this.fail(admission.stop);
        this.emit(await this.group.transform(event, this.source.caller, loaders));
        if (this.ready.length >= CATCH_UP_HIGH_WATER) await new Promise<void>((r) => (this.room = r));
      }
    } catch (e) {
      if (!isDomainError(e)) this.group.options.onError?.(e);
      return this.fail(isDomainError(e) ? e : unavailable());
    }
    if (this.done) return;
    this.catchingUp = false;
    for (const { position, value } of this.held) this.live(position, value);
    this.held = [];
    if (this.endedDuringCatchUp) this.finish(this.endedDuringCatchUp.final);
  }

  /** A result of the group's live stream. */
  live(position: number, value: R): void {
    if (this.done || this.final !== undefined) return;
    if (this.catchingUp) {
      this.held.push({ position, value });
      if (this.held.length > this.maxQueued) this.fail(tooSlow());
      return;
    }
    if (position <= this.after) return;
    this.after = position;
    this.emit(value);
  }

  /** The group's stream is over; `final` is one last message, if any. */
  end(final: Final<R>): void {
    if (this.catchingUp) this.endedDuringCatchUp = { final };
    else this.finish(final);
  }

  fail(error: DomainError): void {
    if (this.done || this.final !== undefined) return;
    // Whatever is still queued is dropped: the subscriber resumes from what it last received.
    this.ready.length = 0;
    this.held = [];
    const failure = this.group.options.failure;
    this.finish(failure ? { value: failure(error) } : { error });
  }

  next(): Promise<IteratorResult<R, undefined>> {
    if (this.ready.length > 0) {
      const value = this.ready.shift() as R;
      if (this.room && this.ready.length < CATCH_UP_HIGH_WATER / 2) {
        this.room();
        this.room = null;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.final !== undefined && !this.done) {
      const final = this.final;
      this.close();
      if (final && 'value' in final) return Promise.resolve({ value: final.value, done: false });
      if (final && 'error' in final) return Promise.reject(final.error);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<R, undefined>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<R, undefined>> {
    this.close();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private emit(value: R): void {
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = null;
      resolve({ value, done: false });
      return;
    }
    this.ready.push(value);
    if (this.ready.length > this.maxQueued) this.fail(tooSlow());
  }

  private finish(final: Final<R>): void {
    if (this.done || this.final !== undefined) return;
    this.final = final;
    // Leave at once: nothing more from the group is wanted.
    this.group.leave(this);
    if (this.waiter && this.ready.length === 0) {
      const { resolve, reject } = this.waiter;
      this.waiter = null;
      this.close();
      if (final && 'value' in final) resolve({ value: final.value, done: false });
      else if (final && 'error' in final) reject(final.error);
      else resolve({ value: undefined, done: true });
    }
  }

  private close(): void {
    if (this.done) return;
    this.done = true;
    this.ready.length = 0;
    this.held = [];
    this.group.leave(this);
    this.room?.();
    this.room = null;
    if (this.waiter) {
      this.waiter.resolve({ value: undefined, done: true });
      this.waiter = null;
    }
  }
}

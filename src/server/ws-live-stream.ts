import type { LiveSubscription, SubscriberSink } from '../graphql/live/live-group';

/**
 * One serialised subscription result on its way to a socket. graphql-ws stringifies every
 * message it sends; this payload's `toJSON` hands its bytes to `takeSharedPayload` (the
 * socket adapter's `send` takes them at once, in the same synchronous call) and stands in
 * as `null`, so a group's one serialised result goes to each of its sockets as is.
 */
export class SharedPayload {
  // Private fields: graphql-ws copies a result's own properties before its onNext hook, and these have none to copy.
  readonly #bytes: Buffer;
  readonly #flushed: (() => void) | undefined;
  readonly #result: IteratorYieldResult<SharedPayload>;

  constructor(bytes: Buffer, flushed: (() => void) | undefined) {
    this.#bytes = bytes;
    this.#flushed = flushed;
    this.#result = { done: false, value: this };
  }

  /** This payload as an iteration step: one object however many streams of a group yield it (graphql-ws only reads it). */
  get result(): IteratorYieldResult<SharedPayload> {
    return this.#result;
  }

  get bytes(): Buffer {
    return this.#bytes;
  }

  /** Runs once the frame left the process (or never will): a catch-up waits for it. */
  get flushed(): (() => void) | undefined {
    return this.#flushed;
  }

  toJSON(): null {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- graphql-ws stringifies the message; its socket's send() takes this payload back (takeSharedPayload)
    pending = this;
    return null;
  }
}

let pending: SharedPayload | null = null;

/** The SharedPayload the message just stringified stood in for (null when it had none); clears it. */
export function takeSharedPayload(): SharedPayload | null {
  const taken = pending;
  pending = null;
  return taken;
}

/** The socket a stream sends on, as far as a catch-up's pace goes. */
export interface Congestion {
  /** More is waiting to be sent than the socket likes: a catch-up waits for a flush. */
  readonly congested: boolean;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A live subscription as graphql-ws consumes one (an async generator of results): the
 * LiveGroup delivers into its `sink`, graphql-ws pulls each payload and sends it (through
 * `onNext` and the socket adapter). `return()` (the client completed the operation, or the
 * socket closed) leaves the group at once. Payloads wait here only between the group's
 * delivery and graphql-ws's next pull: a few microtasks, not a client's reading.
 */
export class LiveStream implements AsyncGenerator<SharedPayload, undefined, undefined> {
  readonly sink: SubscriberSink;
  private live: LiveSubscription | null = null;
  private queued: SharedPayload[] | null = null;
  private waiting: ((result: IteratorResult<SharedPayload, undefined>) => void) | null = null;
  private ended = false;
  private completed = false;

  constructor(socket: Congestion) {
    this.sink = new StreamSink(this, socket);
  }

  /** The subscription now delivering here; cancelled at once if the operation already ended. */
  attach(live: LiveSubscription): void {
    if (this.ended) live.cancel();
    else this.live = live;
  }

  next(): Promise<IteratorResult<SharedPayload, undefined>> {
    const first = this.queued?.shift();
    if (first) return Promise.resolve(first.result);
    if (this.completed || this.ended) return Promise.resolve(DONE);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async return(): Promise<IteratorResult<SharedPayload, undefined>> {
    this.cancel();
    return DONE;
  }

  async throw(error: unknown): Promise<IteratorResult<SharedPayload, undefined>> {
    this.cancel();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.cancel();
  }

  /** The group's next payload. */
  push(item: SharedPayload): void {
    if (this.ended || this.completed) return item.flushed?.();
    if (this.waiting) return this.wake(item.result);
    (this.queued ??= []).push(item);
  }

  /** The group's stream is over: what is queued still goes, then the iteration ends. */
  complete(): void {
    if (this.completed) return;
    this.completed = true;
    this.live = null;
    if (!this.queued?.length) this.wake(DONE);
  }

  private wake(result: IteratorResult<SharedPayload, undefined>): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(result);
  }

  /** Stop: leave the group, drop what waits (releasing catch-ups that wait for a flush), end the iteration. */
  private cancel(): void {
    if (this.ended) return;
    this.ended = true;
    this.live?.cancel();
    this.live = null;
    for (const item of this.queued ?? []) item.flushed?.();
    this.queued = null;
    this.wake(DONE);
  }
}

/** The latest live payload's SharedPayload, which the members of its group share. */
let lastLive: SharedPayload | null = null;

/** The LiveGroup's side of a LiveStream. */
class StreamSink implements SubscriberSink {
  constructor(
    private readonly stream: LiveStream,
    private readonly socket: Congestion,
  ) {}

  get congested(): boolean {
    return this.socket.congested;
  }

  next(payload: Buffer, flushed?: () => void): void {
    if (flushed) return this.stream.push(new SharedPayload(payload, flushed));
    // Nothing waits for this one's flush: every member of the group pushes the same SharedPayload.
    if (lastLive?.bytes !== payload) lastLive = new SharedPayload(payload, undefined);
    this.stream.push(lastLive);
  }

  complete(): void {
    this.stream.complete();
  }
}

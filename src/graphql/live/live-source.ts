import type { Caller } from '../../domain/caller';
import type { DomainError } from '../../domain/errors';
import type { Loaders } from '../loaders';
import type { Services } from '../services';
import type { SharedFacts } from './event-facts';

/** Whether an event may go to the subscriber now: yes, not this one, or never again. */
export type Admission = 'deliver' | 'skip' | { readonly stop: DomainError };

/**
 * An event decided for every viewer at once, from facts read once (graphql/live/event-facts.ts):
 * nobody gets it ('skip'), or each viewer's own admission, cheap to ask (no read, no execution).
 */
export type ViewerDecision = 'skip' | ((caller: Caller) => Admission);

export interface LiveSink<E> {
  next(event: E): void;
  /** The stream is over (for example, the turn left PENDING). */
  end(): void;
}

/**
 * One subscription's event stream, as the subscription resolvers create it after checking
 * access: live events from the moment it is opened, what a new subscriber must see first
 * (replayed history, text so far), and the rule that authorises each event when it is
 * delivered. Subscribers with the same operation and visibility share one opened source
 * (see live-group.ts); each still brings its own catch-up.
 */
export abstract class LiveSource<E> implements AsyncIterable<E> {
  constructor(
    readonly caller: Caller,
    readonly services: Services,
  ) {}

  /** Events at or below this position are never delivered to this subscriber. */
  abstract readonly startPosition: number;

  /** Starts live delivery; resolves once nothing can slip between it and a later `catchUp`. */
  abstract open(sink: LiveSink<E>): Promise<() => void>;

  /** What a new subscriber receives before live events, oldest first. */
  abstract catchUp(): AsyncIterable<E>;

  /** Where an event sits in its stream (event id, delta index); later events sit higher. */
  abstract position(event: E): number;

  /** Decides, when the event is about to be delivered, whether this caller may have it. */
  abstract admit(event: E, loaders: Loaders): Promise<Admission>;

  /**
   * `admit` for subscribers of any viewer at once, when a group is shared by different users
   * (the selection does not depend on who asks; see viewer-independence.ts). Same rule as
   * `admit`, split into what holds for everyone (the stream's own rule: a filter) and who may
   * read the event's session, from the facts `shared` reads once for everyone the event reaches.
   * A source without it only shares a group with its own viewer.
   */
  admitViewers?(event: E, shared: SharedFacts): Promise<ViewerDecision>;

  /**
   * graphql-js accepts a subscription field's result only when it is async-iterable. The
   * events themselves are never pulled from a source one subscriber at a time: the
   * SubscriptionExecutor delivers them, one execution per group (live-group.ts).
   */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    throw new Error('a LiveSource is delivered by the SubscriptionExecutor, not iterated');
  }
}

export async function* noEvents<E>(): AsyncIterable<E> {}

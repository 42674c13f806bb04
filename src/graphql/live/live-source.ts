import type { Caller } from '../../domain/caller';
import type { DomainError } from '../../domain/errors';
import type { Loaders } from '../loaders';
import type { Services } from '../services';

/** Whether an event may go to the subscriber now: yes, not this one, or never again. */
export type Admission = 'deliver' | 'skip' | { readonly stop: DomainError };

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
   * graphql-js accepts a subscription field's result only when it is async-iterable. The
   * events themselves are never pulled from a source one subscriber at a time: the
   * SubscriptionExecutor delivers them, one execution per group (live-group.ts).
   */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    throw new Error('a LiveSource is delivered by the SubscriptionExecutor, not iterated');
  }
}

export async function* noEvents<E>(): AsyncIterable<E> {}

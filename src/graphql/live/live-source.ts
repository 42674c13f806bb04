import type { Caller } from '../../domain/caller';
import type { DomainError } from '../../domain/errors';
import type { Loaders } from '../loaders';
import type { Services } from '../services';
import { LiveGroup } from './live-group';

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
   * The events for one subscriber on its own (catch-up, then live, each authorised), so the
   * source also works as a plain GraphQL source stream. The WebSocket server does not use it:
   * it shares one execution per event between subscribers (subscription-executor.ts).
   */
  [Symbol.asyncIterator](): AsyncIterator<E> {
    return new LiveGroup<E, E>(this, async (event) => event).join(this);
  }
}

export async function* noEvents<E>(): AsyncIterable<E> {}

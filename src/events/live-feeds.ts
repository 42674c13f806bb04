import type { EventBus } from './event-bus.port';
import type { TurnEventHistory } from './turn-event.repository';
import type { TurnStatusEvent } from './turn-events';

/**
 * Which of an org's status events a listener wants, as far as can be told before its own
 * rule runs: all of them, one session's, or those whose session has a pinned value (a key
 * of domain/session-filter.ts's `filterPin`). A listener may still drop what it is given.
 */
export type StatusRoute =
  | { readonly kind: 'org' }
  | { readonly kind: 'session'; readonly sessionId: string }
  | { readonly kind: 'pin'; readonly pin: string };

/** Ordered status events, org by org, each handed only to the listeners whose route it can match. */
export interface StatusFeed {
  subscribe(orgId: string, listener: (event: TurnStatusEvent) => void, route?: StatusRoute): () => void;
}

/**
 * What live subscriptions read from: ordered status events, their stored history, and
 * streamed text. They read only: publishing and pruning are not theirs.
 */
export interface LiveFeeds {
  readonly statuses: StatusFeed;
  readonly history: TurnEventHistory;
  readonly output: Pick<EventBus, 'onTurnOutput' | 'onResync' | 'outputSoFar'>;
}

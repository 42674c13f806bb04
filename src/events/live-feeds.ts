import type { EventBus } from './event-bus.port';
import type { TurnEventHistory } from './turn-event.repository';
import type { TurnEventSequencer } from './turn-event-sequencer';

/**
 * What live subscriptions read from: ordered status events, their stored history, and
 * streamed text. They read only: publishing and pruning are not theirs.
 */
export interface LiveFeeds {
  readonly statuses: Pick<TurnEventSequencer, 'subscribe'>;
  readonly history: TurnEventHistory;
  readonly output: Pick<EventBus, 'onTurnOutput' | 'onResync' | 'outputSoFar'>;
}

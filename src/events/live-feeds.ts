import type { EventBus } from './event-bus.port';
import type { TurnEventRepository } from './turn-event.repository';
import type { TurnEventSequencer } from './turn-event-sequencer';

/** What live subscriptions read from: ordered status events, their stored history, and streamed text. */
export interface LiveFeeds {
  readonly statuses: TurnEventSequencer;
  readonly history: TurnEventRepository;
  readonly output: EventBus;
}

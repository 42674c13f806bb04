import type { TurnEventSink, TurnStatusEvent } from './turn-events';
import type { TurnOutputDelta, TurnOutputSink, TurnRef } from './turn-output.port';

/**
 * Carries committed status events and streamed answer text between gateway instances, and
 * keeps each turn's text so far for subscribers that join late.
 *
 * Publishing (`turnStatusChanged`, `append`, `end`) never throws and never waits: the change
 * it reports is already durable, and a bus outage must not fail or slow down queries and
 * mutations. What a subscriber misses while the bus is down is recovered from turn_events
 * (status) when the bus comes back (`onResync`), or is lost (text deltas; the full answer
 * is stored with the turn).
 */
export interface EventBus extends TurnEventSink, TurnOutputSink {
  /** Every status event published by any instance, in arrival order (the sequencer orders them). */
  onTurnStatus(listener: (event: TurnStatusEvent) => void): () => void;
  /**
   * Text deltas of one turn as they are appended anywhere. Resolves once delivery is in
   * effect, so a reader that then calls `outputSoFar` misses nothing in between.
   */
  onTurnOutput(turn: TurnRef, listener: (delta: TurnOutputDelta) => void): Promise<() => void>;
  /** The text appended so far for a turn, in index order, from `fromIndex` on. */
  outputSoFar(turn: TurnRef, fromIndex: number): Promise<TurnOutputDelta[]>;
  /** Called after the bus reconnected, when messages published meanwhile may have been missed. */
  onResync(listener: () => void): () => void;
  /** Throws when live delivery is not available (readiness). */
  check(): Promise<void>;
  close(): Promise<void>;
}

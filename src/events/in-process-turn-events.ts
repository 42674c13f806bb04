import { EventEmitter } from 'node:events';
import type { TurnEventSink, TurnStatusEvent } from './turn-events';

/** Single-instance event delivery: the embedded default when no REDIS_URL is set. */
export class InProcessTurnEvents implements TurnEventSink {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  turnStatusChanged(event: TurnStatusEvent): void {
    this.emitter.emit('turn-status', event);
  }

  onTurnStatus(listener: (event: TurnStatusEvent) => void): () => void {
    this.emitter.on('turn-status', listener);
    return () => this.emitter.off('turn-status', listener);
  }
}

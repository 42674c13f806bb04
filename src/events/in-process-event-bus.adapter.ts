import type { Logger } from '../logger';
import type { EventBus } from './event-bus.port';
import { OutputBuffer } from './output-buffer';
import type { TurnStatusEvent } from './turn-events';
import type { TurnOutputDelta, TurnRef } from './turn-output.port';

/**
 * The embedded bus: one instance, no Redis. Delivery is synchronous and in publish order;
 * a listener that throws is logged and never reaches the publisher (the turn lifecycle).
 */
export class InProcessEventBus implements EventBus {
  private readonly statusListeners = new Set<(event: TurnStatusEvent) => void>();
  private readonly outputListeners = new Map<string, Set<(delta: TurnOutputDelta) => void>>();
  constructor(
    private readonly logger: Logger,
    private readonly buffer: OutputBuffer = new OutputBuffer(),
  ) {}

  turnStatusChanged(event: TurnStatusEvent): void {
    for (const listener of this.statusListeners) this.safely(() => listener(event));
  }

  append(delta: TurnOutputDelta): void {
    this.buffer.append(delta);
    for (const listener of this.outputListeners.get(delta.turnId) ?? []) this.safely(() => listener(delta));
  }

  end(turn: TurnRef): void {
    this.buffer.end(turn.turnId);
  }

  onTurnStatus(listener: (event: TurnStatusEvent) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  async onTurnOutput(turn: TurnRef, listener: (delta: TurnOutputDelta) => void): Promise<() => void> {
    let listeners = this.outputListeners.get(turn.turnId);
    if (!listeners) this.outputListeners.set(turn.turnId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.outputListeners.get(turn.turnId) === listeners) this.outputListeners.delete(turn.turnId);
    };
  }

  async outputSoFar(turn: TurnRef, fromIndex: number): Promise<TurnOutputDelta[]> {
    return this.buffer.read(turn.turnId, fromIndex);
  }

  onResync(): () => void {
    // Nothing is ever missed in process.
    return () => undefined;
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {
    this.statusListeners.clear();
    this.outputListeners.clear();
  }

  private safely(deliver: () => void): void {
    try {
      deliver();
    } catch (e) {
      this.logger.error({ err: e }, 'an event listener failed');
    }
  }
}

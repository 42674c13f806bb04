import type { SubscribingClient } from './ws';

/** One event of the org-wide feed, as the crash test and the soak bench select it. */
export interface ActivityEvent {
  readonly eventId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly status: string;
}

export const ACTIVITY = `subscription Activity($after: ID) {
  sessionActivity(afterEventId: $after) { eventId sessionId turnId status }
}`;

/**
 * A client of `sessionActivity` as a well-behaved application writes one: it keeps every
 * event it received and, when its connection breaks, subscribes again (through whatever client
 * it is given, on whichever instance) from the last event it saw. `events` is everything it
 * received across all its connections, in arrival order.
 */
export class ResumingFeed {
  readonly events: ActivityEvent[] = [];
  /** Errors that ended a connection, in order (a dead instance shows up here). */
  readonly breaks: unknown[] = [];
  private stop: (() => void) | null = null;
  private connected = false;

  /** Subscribes through `client`; the first connection starts at `from` (a fresh database: '0'). */
  connect(client: SubscribingClient, from = '0'): void {
    const after = this.events.at(-1)?.eventId ?? from;
    this.connected = true;
    this.stop = client.subscribe<{ sessionActivity: ActivityEvent }>(
      { query: ACTIVITY, variables: { after } },
      {
        next: (result) => {
          if (result.data) this.events.push(result.data.sessionActivity);
          else this.breaks.push(result.errors);
        },
        error: (e) => {
          this.connected = false;
          this.breaks.push(e);
        },
        complete: () => {
          this.connected = false;
        },
      },
    );
  }

  get isConnected(): boolean {
    return this.connected;
  }

  close(): void {
    this.stop?.();
    this.connected = false;
  }
}

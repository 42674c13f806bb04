import type { EntityHeader } from '../domain/caller';
import type { TurnStatus } from '../domain/turn-status';

/** A committed status change of one turn, as stored in turn_events and sent on the bus. */
export interface TurnStatusEvent {
  /** Strictly increasing within the org (each org has its own sequence), assigned in commit order. */
  readonly eventId: number;
  readonly orgId: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly sequenceNumber: number;
  readonly previousStatus: TurnStatus | null;
  readonly status: TurnStatus;
  readonly statusTimeStamp: Date;
  readonly createdByUser: EntityHeader;
}

/**
 * Where the turn lifecycle hands events once their transaction has committed. It must not
 * throw: the change is already durable, and the stored event can be replayed later.
 */
export interface TurnEventSink {
  turnStatusChanged(event: TurnStatusEvent): void;
}

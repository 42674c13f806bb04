import type { ToolCallEvent } from '../domain/tool-call-record';

/** Identifies one turn's output stream. */
export interface TurnRef {
  readonly orgId: string;
  readonly sessionId: string;
  readonly turnId: string;
}

/**
 * One item of a turn's output stream; `index` is 0-based and gap-free per turn. Either a piece
 * of answer text as the LLM streams it, or (with `toolCall`, and empty text) a tool call as it
 * starts or ends (spec 004 section 7).
 */
export interface TurnOutputDelta extends TurnRef {
  readonly index: number;
  readonly textDelta: string;
  readonly toolCall?: ToolCallEvent;
}

/**
 * Port: where the orchestrator writes streamed answer text. The live-subscription side
 * decides how deltas reach subscribers (and late joiners); the orchestrator only appends and
 * ends. Adapters: the event buses (event-bus.port.ts). It never throws: text lost on the way
 * is in the stored answer.
 */
export interface TurnOutputSink {
  append(delta: TurnOutputDelta): void;
  /** The turn left PENDING (or stopped streaming for a tool continuation): the stream is complete. */
  end(turn: TurnRef): void;
}

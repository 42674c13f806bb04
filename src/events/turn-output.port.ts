/** Identifies one turn's output stream. */
export interface TurnRef {
  readonly orgId: string;
  readonly sessionId: string;
  readonly turnId: string;
}

/** One piece of answer text as the LLM streams it; `index` is 0-based and gap-free per turn. */
export interface TurnOutputDelta extends TurnRef {
  readonly index: number;
  readonly textDelta: string;
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

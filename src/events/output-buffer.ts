import type { TurnOutputDelta } from './turn-output.port';

interface Entry {
  readonly deltas: TurnOutputDelta[];
  bytes: number;
  expiresAt: number;
}

export interface OutputBufferLimits {
  /** Upper bound on the text kept for all turns together (UTF-16 code units, about bytes). */
  readonly maxTotalChars: number;
  /** How long a turn's text is kept after its last delta while it streams. */
  readonly streamingTtlMs: number;
  /** How long it is kept once the stream ended (late joiners of a just-finished turn). */
  readonly endedTtlMs: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputBufferLimits = {
  maxTotalChars: 64 * 1024 * 1024,
  streamingTtlMs: 60 * 60 * 1000,
  endedTtlMs: 10 * 60 * 1000,
};

/**
 * The in-process copy of each turn's text so far, for the embedded bus. Bounded: entries
 * expire, and past the size bound the least recently written turns are dropped first (a
 * late joiner of such a turn then gets only what is left, and sees the gap in `index`).
 */
export class OutputBuffer {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;

  constructor(
    private readonly limits: OutputBufferLimits = DEFAULT_OUTPUT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  append(delta: TurnOutputDelta): void {
    const now = this.now();
    this.expire(now);
    let entry = this.entries.get(delta.turnId);
    if (entry) this.entries.delete(delta.turnId);
    else entry = { deltas: [], bytes: 0, expiresAt: 0 };
    // Re-inserting keeps the Map in least-recently-written order.
    this.entries.set(delta.turnId, entry);
    entry.deltas.push(delta);
    const size = sizeOf(delta);
    entry.bytes += size;
    entry.expiresAt = now + this.limits.streamingTtlMs;
    this.totalChars += size;
    for (const [turnId, oldest] of this.entries) {
      if (this.totalChars <= this.limits.maxTotalChars || turnId === delta.turnId) break;
      this.drop(turnId, oldest);
    }
  }

  end(turnId: string): void {
    const entry = this.entries.get(turnId);
    if (entry) entry.expiresAt = Math.min(entry.expiresAt, this.now() + this.limits.endedTtlMs);
  }

  read(turnId: string, fromIndex: number): TurnOutputDelta[] {
    this.expire(this.now());
    return (this.entries.get(turnId)?.deltas ?? []).filter((d) => d.index >= fromIndex);
  }

  get size(): number {
    return this.entries.size;
  }

  private expire(now: number): void {
    for (const [turnId, entry] of this.entries) if (entry.expiresAt <= now) this.drop(turnId, entry);
  }

  private drop(turnId: string, entry: Entry): void {
    this.entries.delete(turnId);
    this.totalChars -= entry.bytes;
  }
}

/** Characters an item holds: its text, or the recorded arguments and result of a tool call. */
function sizeOf(delta: TurnOutputDelta): number {
  const call = delta.toolCall;
  return delta.textDelta.length + (call ? call.argumentsJson.length + (call.resultSummary?.length ?? 0) + call.name.length : 0);
}

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
  /**
   * How long it is kept once the stream ended: for late joiners of a just-finished turn only, as
   * the answer itself is stored with the turn; longer costs heap in proportion to turns per
   * second (docs/performance.md, bench:soak).
   */
  readonly endedTtlMs: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputBufferLimits = {
  maxTotalChars: 64 * 1024 * 1024,
  streamingTtlMs: 60 * 60 * 1000,
  endedTtlMs: 60 * 1000,
};

const SWEEP_INTERVAL_MS = 1_000;

/**
 * The in-process copy of each turn's text so far, for the embedded bus. Bounded: entries
 * expire, and past the size bound the least recently written turns are dropped first (a
 * late joiner of such a turn then gets only what is left, and sees the gap in `index`).
 */
export class OutputBuffer {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;
  private nextSweepAt = 0;

  constructor(
    private readonly limits: OutputBufferLimits = DEFAULT_OUTPUT_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  append(delta: TurnOutputDelta): void {
    const now = this.now();
    this.expire(now);
    let entry = this.live(delta.turnId, now);
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
    const now = this.now();
    this.expire(now);
    return (this.live(turnId, now)?.deltas ?? []).filter((d) => d.index >= fromIndex);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The turn's entry unless it expired (dropped then: sweeps run only now and then). */
  private live(turnId: string, now: number): Entry | undefined {
    const entry = this.entries.get(turnId);
    if (!entry || entry.expiresAt > now) return entry;
    this.drop(turnId, entry);
    return undefined;
  }

  /**
   * Drops expired turns, at most once per SWEEP_INTERVAL_MS: a sweep visits every turn kept
   * (thousands after a burst, kept minutes after they end), and ran on every delta before.
   */
  private expire(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + SWEEP_INTERVAL_MS;
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

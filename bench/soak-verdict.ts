/** The kinds of request the soak times. */
export type SoakKind = 'list' | 'execute' | 'cancel';

/** One sample of the soak: the gateway's memory and lag now, and each kind's p99 over the window since the last. */
export interface Sample {
  readonly atSeconds: number;
  readonly rssMb: number;
  readonly heapMb: number;
  /** Memory outside the JS heap that JS objects hold (Buffers, ...). */
  readonly externalMb: number;
  /** What V8 holds from the system for the JS heap, live or not, and of it the old generation's part and its used bytes. */
  readonly heapCommittedMb: number;
  readonly oldSpaceMb: number;
  readonly oldSpaceUsedMb: number;
  readonly lagP99Ms: number;
  readonly p99: Readonly<Record<SoakKind, number>>;
  readonly counts: Readonly<Record<SoakKind, number>>;
  /** Failed requests so far. */
  readonly errors: number;
}

/** The first and last minute after the warm-up are compared, each pooled over its samples (one window is noisy). */
const COMPARED_SECONDS = 60;
export const MAX_RSS_GROWTH = 0.1;
export const MAX_P99_RATIO = 2;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Issue 36 point 9: fails when RSS grew more than 10% after the warm-up, or when a p99 (a kind
 * of request's, or the event loop's lag) doubled. Compared: the samples of the first minute after
 * the warm-up against those of the last minute (at least one sample each; the two may overlap in
 * a short run). A p99 is the mean of the window p99s, weighted by the window's requests.
 */
export function soakVerdict(samples: readonly Sample[], warmupSeconds: number): { ok: boolean; lines: string[] } {
  const after = samples.filter((s) => s.atSeconds > warmupSeconds);
  if (after.length < 2) return { ok: false, lines: [`only ${after.length} sample(s) after the ${warmupSeconds} s warm-up: run longer`] };
  const endOfFirst = after[0]!.atSeconds + COMPARED_SECONDS;
  const first = after.filter((s, i) => i === 0 || s.atSeconds < endOfFirst);
  const startOfLast = after.at(-1)!.atSeconds - COMPARED_SECONDS;
  const last = after.filter((s, i) => i === after.length - 1 || s.atSeconds > startOfLast);
  const lines: string[] = [];
  let ok = true;
  const compare = (what: string, before: number, now: number, limit: number, unit: string) => {
    const ratio = now / before;
    const bad = Number.isFinite(ratio) && ratio > limit;
    if (bad) ok = false;
    lines.push(`${what.padEnd(20)} ${before.toFixed(1).padStart(8)} -> ${now.toFixed(1).padStart(8)} ${unit.padEnd(3)} (x${ratio.toFixed(2)}, limit x${limit})${bad ? '  FAIL' : ''}`);
  };
  compare('RSS', mean(first.map((s) => s.rssMb)), mean(last.map((s) => s.rssMb)), 1 + MAX_RSS_GROWTH, 'MB');
  compare('JS heap (info)', mean(first.map((s) => s.heapMb)), mean(last.map((s) => s.heapMb)), Infinity, 'MB');
  compare('V8 committed (info)', mean(first.map((s) => s.heapCommittedMb)), mean(last.map((s) => s.heapCommittedMb)), Infinity, 'MB');
  compare('old space (info)', mean(first.map((s) => s.oldSpaceMb)), mean(last.map((s) => s.oldSpaceMb)), Infinity, 'MB');
  compare('external (info)', mean(first.map((s) => s.externalMb)), mean(last.map((s) => s.externalMb)), Infinity, 'MB');
  compare('event-loop lag p99', mean(first.map((s) => s.lagP99Ms)), mean(last.map((s) => s.lagP99Ms)), MAX_P99_RATIO, 'ms');
  for (const kind of ['list', 'execute', 'cancel'] as const) {
    const weighted = (xs: readonly Sample[]) => {
      const n = xs.reduce((sum, s) => sum + s.counts[kind], 0);
      return n === 0 ? NaN : xs.reduce((sum, s) => sum + s.p99[kind] * s.counts[kind], 0) / n;
    };
    compare(`${kind} p99`, weighted(first), weighted(last), MAX_P99_RATIO, 'ms');
  }
  lines.unshift(
    `compared: ${first.length} sample(s) from ${first[0]!.atSeconds.toFixed(0)} s with ${last.length} from ${last[0]!.atSeconds.toFixed(0)} s to ${after.at(-1)!.atSeconds.toFixed(0)} s`,
  );
  return { ok, lines };
}

/** A closed-loop load generator: `concurrency` workers call `request` back to back for `seconds`. */
export interface LoadResult {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** What one run saw: every request's latency and how long the run took. */
export interface LoadSample {
  readonly latenciesMs: number[];
  readonly seconds: number;
}

export async function sampleLoad(request: () => Promise<void>, concurrency: number, seconds: number): Promise<LoadSample> {
  const latenciesMs: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await request();
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000 };
}

/** Several runs of the same target (e.g. interleaved rounds) as one: requests over total time, pooled percentiles. */
export function summarise(samples: readonly LoadSample[]): LoadResult {
  const latencies = samples.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requests: latencies.length, perSecond: seconds > 0 ? latencies.length / seconds : 0, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export async function runLoad(request: () => Promise<void>, concurrency: number, seconds: number): Promise<LoadResult> {
  return summarise([await sampleLoad(request, concurrency, seconds)]);
}

export const fmt = (r: LoadResult): string =>
  `${r.perSecond.toFixed(0).padStart(6)} req/s   p50 ${r.p50Ms.toFixed(1).padStart(6)} ms   p99 ${r.p99Ms.toFixed(1).padStart(6)} ms   (${r.requests} requests)`;

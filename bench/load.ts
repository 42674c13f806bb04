/** A closed-loop load generator: `concurrency` workers call `request` back to back for `seconds`. */
export interface LoadResult {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export async function runLoad(request: () => Promise<void>, concurrency: number, seconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await request();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { requests: latencies.length, perSecond: latencies.length / elapsed, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export const fmt = (r: LoadResult): string =>
  `${r.perSecond.toFixed(0).padStart(6)} req/s   p50 ${r.p50Ms.toFixed(1).padStart(6)} ms   p99 ${r.p99Ms.toFixed(1).padStart(6)} ms   (${r.requests} requests)`;

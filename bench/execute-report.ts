import { fmt, type LoadResult } from './load';

/*
 * What bench/execute.bench.ts measured, and the lines it prints of it.
 */
export interface Measured {
  readonly load: LoadResult;
  readonly cpuMsPerExecute: number;
  /** Of that, the main thread's: the event loop every request waits for (the rest is GC helpers, the SQLite threads). */
  readonly mainCpuMsPerExecute: number;
  /** The local database server's CPU per execute, meanwhile; null on SQLite or a server elsewhere. */
  readonly serverCpuMsPerExecute: number | null;
  readonly statements: number;
  readonly transactions: number;
}

export interface ThroughputResult {
  readonly alone: LoadResult;
  readonly baseline: Measured;
  readonly gateway: Measured;
  readonly errors: string[];
}

/** A difference with its sign: '+7.1', '-1.3'. */
export const signed = (ms: number) => `${ms < 0 ? '-' : '+'}${Math.abs(ms).toFixed(1)}`;
export const cpuOf = (m: Measured) =>
  `${m.cpuMsPerExecute.toFixed(2)} ms (main thread ${m.mainCpuMsPerExecute.toFixed(2)})` +
  (m.serverCpuMsPerExecute === null ? '' : `, the database server's ${m.serverCpuMsPerExecute.toFixed(2)} ms`);
export const sqlOf = (m: Measured) => `${m.statements} SQL calls (round trips on MySQL) in ${m.transactions} transactions`;
export const overAlone = (m: Measured, alone: LoadResult) =>
  `${(m.load.perSecond / alone.perSecond).toFixed(2)}x the stand-in's req/s, p50 ${signed(m.load.p50Ms - alone.p50Ms)} ms over it`;

export interface Burst {
  readonly peakOpen: number;
  readonly seconds: number;
  /** When the last of the burst reached the provider (NaN: not all did). */
  readonly reachedSeconds: number;
  readonly rssBefore: number;
  readonly peakRss: number;
  readonly kbPerInFlight: number;
  /** The local database server's CPU over the burst, per execute; null on SQLite or a server elsewhere. */
  readonly serverCpuMsPerExecute: number | null;
  readonly failed: number;
  /** The distinct error messages of the failed ones. */
  readonly reasons: string;
}

export interface CapacityResult {
  readonly n: number;
  readonly aloneSeconds: number;
  readonly alonePeak: number;
  readonly baseline: Burst;
  readonly gateway: Burst;
}

/** How long the target took to bring every execute of a burst to the provider: its work before the call, for all of them. */
export const reached = (b: Burst) => (Number.isNaN(b.reachedSeconds) ? 'not all reached the provider' : `all at the provider after ${b.reachedSeconds.toFixed(2)} s`);

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** Part 1's lines for one database. */
export function printThroughput(dbName: string, settings: { clients: number; rounds: number; seconds: number }, r: ThroughputResult): void {
  const { baseline, gateway, errors } = r;
  console.log(`\n1. ${dbName}: ${settings.clients} clients, each with its own session (follow-ons chain), zero-latency provider, ${settings.rounds} interleaved rounds of ${settings.seconds.toFixed(1)} s`);
  console.log(`   the stand-in driven by the openai SDK, no gateway           ${fmt(r.alone)}`);
  console.log(`   hand-written node:http program doing the same job         ${fmt(baseline.load)}`);
  console.log(`   gateway execute -> OpenAI adapter -> stand-in                ${fmt(gateway.load)}`);
  console.log(`   hand-written: ${overAlone(baseline, r.alone)}; its CPU ${cpuOf(baseline)} per execute; ${sqlOf(baseline)} per execute`);
  console.log(
    `   gateway: ${overAlone(gateway, r.alone)}; gateway CPU ${cpuOf(gateway)} per execute; ${sqlOf(gateway)} per execute; ` +
      `${errors.length} errors${errors.length ? ` (${[...new Set(errors)].join(', ')})` : ''}`,
  );
  console.log(
    `   gateway / hand-written: ${(gateway.load.perSecond / baseline.load.perSecond).toFixed(2)}x req/s, p50 ${signed(gateway.load.p50Ms - baseline.load.p50Ms)} ms, ` +
      `${(gateway.cpuMsPerExecute / Math.max(0.01, baseline.cpuMsPerExecute)).toFixed(1)}x its CPU per execute`,
  );
}

/** Part 2's lines for one burst size: the stand-in alone (`aloneAnswered` of `n` answered), then both targets. */
export function printBurst(r: CapacityResult, aloneAnswered: number): void {
  const { n, aloneSeconds } = r;
  const line = (name: string, b: Burst) =>
    `   ${name.padEnd(13)} ${String(n).padStart(5)} at once: ${n - b.failed} answered in ${b.seconds.toFixed(2)} s (${(b.seconds / aloneSeconds).toFixed(2)}x the stand-in alone), ` +
    `peak ${b.peakOpen} in flight at the provider, ${reached(b)}, RSS ${mb(b.rssBefore)} -> ${mb(b.peakRss)} (~${b.kbPerInFlight.toFixed(0)} KB per in-flight execute), ` +
    (b.serverCpuMsPerExecute === null ? '' : `the database server's CPU ${b.serverCpuMsPerExecute.toFixed(2)} ms per execute, `) +
    `${b.failed} errors${b.failed ? ` (${b.reasons})` : ''}`;
  console.log(`   the stand-in alone ${String(n).padStart(5)} at once: ${aloneAnswered} in ${aloneSeconds.toFixed(2)} s, peak ${r.alonePeak} in flight`);
  console.log(line('hand-written', r.baseline));
  console.log(line('gateway', r.gateway));
}

/** The summary's lines for one database, against the goals. */
export function summaryLines(dbName: string, t: ThroughputResult, c: readonly CapacityResult[]): string[] {
  const over = (m: Measured) => `${overAlone(m, t.alone)}, CPU ${cpuOf(m)} per execute`;
  return [
    `   ${dbName}, gateway: ${over(t.gateway)} (goals >= 0.43x: 300 of the issue's 699/s; <= +10 ms), ${t.errors.length} errors`,
    `   ${dbName}, hand-written: ${over(t.baseline)}; the gateway has ${(t.gateway.load.perSecond / t.baseline.load.perSecond).toFixed(2)}x its req/s`,
    ...c.map(
      (r) =>
        `   ${dbName}, ${r.n} at once: gateway ${r.gateway.peakOpen} of ${r.n} in flight at once, ${reached(r.gateway)}, done in ${r.gateway.seconds.toFixed(1)} s, ~${r.gateway.kbPerInFlight.toFixed(0)} KB per in-flight execute, ${r.gateway.failed} errors ` +
        `(goals: all, <= 4 s, <= 100 KB) | hand-written ${r.baseline.peakOpen} in flight, ${reached(r.baseline)}, ${r.baseline.seconds.toFixed(1)} s | the stand-in alone ${r.alonePeak} in flight, ${r.aloneSeconds.toFixed(1)} s`,
    ),
  ];
}

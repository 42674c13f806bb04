import { loadavg } from 'node:os';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { CONCURRENCY, IN_FLIGHT_LEVELS, LATENCY_MS, ORGS, ROUNDS, SECONDS, VIA_REST, WARMUP_SECONDS } from './execute-options';
import { mb, printBurst, printThroughput, summaryLines, type Burst, type CapacityResult, type Measured, type ThroughputResult } from './execute-report';
import {
  cpuMsOf,
  databaseServerStat,
  newSessionClient,
  providerCall,
  sessionClient,
  startBaseline,
  startGateway,
  statementsPerExecute,
  type DatabaseUnderTest,
  type Target,
} from './execute-targets';
import { sampleLoad, summarise, type LoadSample } from './load';

/**
 * Execute throughput and capacity of ONE gateway instance (its own process, NODE_ENV=production,
 * as `npm start` runs it), on embedded SQLite and, with BENCH_MYSQL_URL, on MySQL/MariaDB, each
 * against two baselines in the same run: the test suite's Responses API stand-in (streaming SSE)
 * driven directly by the openai SDK (the provider's own cost), and a hand-written node:http
 * program doing the same job on the same database server (bench/execute-baseline.ts: the floor
 * of the job on this machine). This process plays the clients and the stand-in.
 *
 *  1. executes/s, p50, p99 with a zero-latency provider, 8 clients each with its own session,
 *     in interleaved rounds of the stand-in alone, the hand-written program and the gateway; CPU
 *     time, SQL statements and transactions per execute of both;
 *  2. N executes at once against a provider that answers after 2 s: how many the provider sees
 *     in flight at once, when all are done, RSS per in-flight execute, errors; for the stand-in
 *     alone, the hand-written program and the gateway.
 *
 *   npm run bench:execute
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npm run bench:execute   # both databases
 *   BENCH_PROFILE_DIR=/tmp/prof …   # the gateway runs with --cpu-prof, profiles written there
 *   BENCH_ONLY=mysql (or sqlite) …  # one database only
 *   BENCH_WARMUP_SECONDS=5 …        # load on each target before its first measured round and its first burst
 *   BENCH_EXECUTE_VIA=rest …        # the gateway through its REST route (same handler, no GraphQL layer)
 *   BENCH_CONCURRENCY=8 BENCH_SECONDS=6 BENCH_ROUNDS=3 …   # part 1: clients, seconds split into rounds
 *   BENCH_IN_FLIGHT=500,2000 …      # part 2's bursts in order; 2000,2000 measures a repeat burst too
 *   BENCH_PROVIDER_LATENCY_MS=2000 … # how long the provider takes to answer in part 2
 *   BENCH_ORGS=20 …                 # part 2's executes spread round-robin over this many orgs (default 1)
 */

/** Closed loop; a client (and so its session) has one request out at a time; failures are counted, not fatal. */
async function load(makeClient: () => () => Promise<void>, seconds: number, errors: string[]): Promise<LoadSample> {
  const free = Array.from({ length: CONCURRENCY }, makeClient);
  return sampleLoad(
    async () => {
      const client = free.pop() as () => Promise<void>;
      try {
        await client();
      } catch (e) {
        errors.push((e as Error).message);
      } finally {
        free.push(client);
      }
    },
    CONCURRENCY,
    seconds,
  );
}

async function throughput(db: DatabaseUnderTest): Promise<ThroughputResult> {
  const fake = await startFakeOpenAI({ record: false });
  const g = await startGateway(db, { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url });
  const hand = await startBaseline(db, fake);
  try {
    const errors: string[] = [];
    await load(() => providerCall(fake), WARMUP_SECONDS, errors);
    const server = db.mysqlUrl ? databaseServerStat() : null;
    const runs = [hand, g].map((target) => ({ target, samples: [] as LoadSample[], cpuMs: 0, mainCpuMs: 0, serverCpuMs: 0 }));
    for (const { target } of runs) await load(() => sessionClient(target), WARMUP_SECONDS, errors);
    const sql = await Promise.all(runs.map(({ target }) => statementsPerExecute(target)));
    const alone: LoadSample[] = [];
    const seconds = SECONDS / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(await load(() => providerCall(fake), seconds, errors));
      for (const run of runs) {
        const cpu0 = run.target.cpuMs();
        const server0 = cpuMsOf(server);
        run.samples.push(await load(() => sessionClient(run.target), seconds, errors));
        const cpu1 = run.target.cpuMs();
        run.cpuMs += cpu1.process - cpu0.process;
        run.mainCpuMs += cpu1.main - cpu0.main;
        run.serverCpuMs += cpuMsOf(server) - server0;
      }
    }
    const [baseline, gateway] = runs.map((run, i): Measured => {
      const result = summarise(run.samples);
      const executes = Math.max(1, result.requests);
      return {
        load: result,
        cpuMsPerExecute: run.cpuMs / executes,
        mainCpuMsPerExecute: run.mainCpuMs / executes,
        serverCpuMsPerExecute: server ? run.serverCpuMs / executes : null,
        ...sql[i]!,
      };
    }) as [Measured, Measured];
    const r: ThroughputResult = { alone: summarise(alone), baseline, gateway, errors };
    printThroughput(db.name, { clients: CONCURRENCY, rounds: ROUNDS, seconds }, r);
    return r;
  } finally {
    await hand.close();
    await g.close();
    await fake.close();
  }
}

/** `n` executes, each a new session, sent at once to `t`; the peak the provider sees open is what `t` holds. */
async function burst(t: Target, fake: FakeOpenAI, n: number, server: string | null): Promise<Burst> {
  const rssBefore = t.child.rssBytes();
  const server0 = cpuMsOf(server);
  let peakRss = rssBefore;
  let peakOpen = 0;
  const receivedBefore = fake.requests.length;
  let reachedSeconds = Number.NaN;
  const t0 = performance.now();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, t.child.rssBytes());
    peakOpen = Math.max(peakOpen, fake.open);
    if (Number.isNaN(reachedSeconds) && fake.requests.length - receivedBefore >= n) reachedSeconds = (performance.now() - t0) / 1000;
  }, 25);
  const settled = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => t.execute({ agentContextId: t.contextIds[i % ORGS], instruction: `In flight ${i}` }, i % ORGS)),
  );
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const failed = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const reasons = [...new Set(failed.map((f) => String((f.reason as Error).message)))].join(', ');
  return {
    peakOpen,
    seconds,
    reachedSeconds,
    kbPerInFlight: (peakRss - rssBefore) / 1024 / Math.max(1, peakOpen),
    serverCpuMsPerExecute: server ? (cpuMsOf(server) - server0) / Math.max(1, n) : null,
    failed: failed.length,
    reasons,
    rssBefore,
    peakRss,
  };
}

/**
 * N executes at once against a provider that answers after LATENCY_MS: the stand-in alone, the
 * hand-written program, the gateway. Each target first gets WARMUP_SECONDS of closed-loop
 * new-session executes on a zero-latency provider, as in the throughput part: a cold process
 * spends a burst's first seconds in V8's optimising compiler (perf: 0.6 s of the gateway's
 * other threads in a 2,000-burst on MariaDB when only the 500-burst had run before it).
 */
async function capacity(db: DatabaseUnderTest): Promise<CapacityResult[]> {
  const fake = await startFakeOpenAI({ record: false });
  const g = await startGateway(db, { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url, LLM_TIMEOUT_MS: '120000' });
  const hand = await startBaseline(db, fake);
  const direct = providerCall(fake);
  const server = db.mysqlUrl ? databaseServerStat() : null;
  const results: CapacityResult[] = [];
  try {
    const warmupErrors: string[] = [];
    for (const target of [hand, g]) await load(() => newSessionClient(target), WARMUP_SECONDS, warmupErrors);
    if (warmupErrors.length > 0) throw new Error(`${warmupErrors.length} warm-up executes failed: ${[...new Set(warmupErrors)].join(', ')}`);
    fake.setLatency(LATENCY_MS);
    console.log(
      `\n2. ${db.name}: executes at once, each a new session, spread over ${ORGS} org(s), provider latency ${LATENCY_MS} ms, after ${WARMUP_SECONDS} s of warm-up load on each target; gateway idle RSS ${mb(g.child.rssBytes())}`,
    );
    for (const n of IN_FLIGHT_LEVELS) {
      let alonePeak = 0;
      const aloneSampler = setInterval(() => (alonePeak = Math.max(alonePeak, fake.open)), 25);
      const t0 = performance.now();
      const alone = await Promise.allSettled(Array.from({ length: n }, () => direct()));
      const aloneSeconds = (performance.now() - t0) / 1000;
      clearInterval(aloneSampler);
      const baseline = await burst(hand, fake, n, server);
      const gateway = await burst(g, fake, n, server);
      const result = { n, aloneSeconds, alonePeak, baseline, gateway };
      results.push(result);
      printBurst(result, alone.filter((r) => r.status === 'fulfilled').length);
    }
  } finally {
    await hand.close();
    await g.close();
    await fake.close();
  }
  return results;
}

async function main(): Promise<void> {
  // BENCH_ONLY=mysql (or sqlite) measures one database: half the run, for A/B rounds on one of them.
  const only = process.env.BENCH_ONLY;
  const databases: DatabaseUnderTest[] = [
    { name: 'embedded SQLite', mysqlUrl: null },
    ...(process.env.BENCH_MYSQL_URL ? [{ name: 'MySQL/MariaDB', mysqlUrl: process.env.BENCH_MYSQL_URL }] : []),
  ].filter((d) => !only || (only === 'mysql') === (d.mysqlUrl !== null));
  console.log(`node ${process.version}; each gateway in its own process (NODE_ENV=production), blobs in the embedded store (DATA_DIR/blobs.sqlite); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (VIA_REST) console.log('BENCH_EXECUTE_VIA=rest: the gateway is called through POST /api/ai/agent/execute, not the GraphQL mutation');
  if (!process.env.BENCH_MYSQL_URL) console.log('MySQL/MariaDB: skipped (set BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test to measure it too)');
  const summary: string[] = [];
  for (const db of databases) {
    const t = await throughput(db);
    const c = await capacity(db);
    summary.push(...summaryLines(db.name, t, c));
  }
  console.log(`\nSummary (load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}):\n${summary.join('\n')}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

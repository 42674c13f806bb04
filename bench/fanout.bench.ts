import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import type WebSocket from 'ws';
import { issueToken } from '../src/server/auth';
import { PhaseProfiler } from './fanout-profiler';
import { fastSubscriber, filteredFeeds, Receipts, ServerProcess, SlowReader, waitFor, type ServerStats } from './fanout-clients';
import { BENCH_SECRET } from './bench-child';

/**
 * Fan-out of turn status events to N WebSocket subscribers of one session.
 *
 *   npm run bench:fanout
 *   BENCH_SUBSCRIBERS=1000,10000 BENCH_EVENTS=10 BENCH_ROUNDS=3 \
 *   BENCH_REDIS_URL=redis://127.0.0.1:6379 BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test \
 *     node dist-bench/bench/fanout.bench.js
 *
 * BENCH_SCENARIOS picks scenarios (default baseline,gateway,slow,per-subscriber,redis):
 *   - baseline: a bare node:http + ws server (fanout-baseline-server.ts) pushing one prebuilt
 *     frame to every socket, to the same clients: the floor for these sockets on this machine;
 *   - graphql-ws (only when named): the baseline's server with graphql-ws's server as the
 *     protocol and the gateway's LiveStream per operation, fed one payload per event, no
 *     gateway (fanout-graphql-ws-server.ts): the floor of the design the gateway keeps;
 *   - gateway: one instance as configured by default (shared execution), NODE_ENV=production;
 *     with BENCH_BEFORE_DIR (another checkout, its bench built: `npx tsc -p tsconfig.bench.json`)
 *     that checkout's gateway runs the same scenario just before, for an A/B in one run;
 *   - slow: the same, plus BENCH_SLOW clients that follow the session AND a turn streaming
 *     BENCH_FLOOD_KB of text before each event, and never read: the gateway must drop them
 *     (close code 4413) without the others' latency moving; afterwards each reads again,
 *     sees the close code, and resumes with afterEventId to check it lost nothing;
 *   - per-subscriber: WS_SHARED_EXECUTION=false (one execution per subscriber), for comparison;
 *   - redis: two instances through Redis and MySQL (BENCH_REDIS_URL and BENCH_MYSQL_URL): the
 *     event is committed on instance A, the subscribers are connected to instance B.
 *   - filters (issue 36.2): what one user at LIVE_MAX_OPERATIONS_PER_USER (200) sessionActivity
 *     feeds with distinct filters that match nothing adds to another user's turn: the gateway's
 *     CPU per status change and its latency to that user's own subscriber, with no such feeds
 *     and with BENCH_FILTERS of them (BENCH_FILTER_KIND=repo: each pins a repo, the index
 *     skips them; search: each pins nothing indexable, every event wakes each), over
 *     BENCH_FILTER_EVENTS events.
 * Subscribers are org admins (BENCH_ROLE=user: ordinary users; mixed: every other user an
 * admin), BENCH_SOCKETS_PER_USER (default 20, the default WS_MAX_CONNECTIONS_PER_USER) sockets
 * per user, so every limit keeps its default; BENCH_SOCKETS_PER_USER=1 makes every subscriber a
 * user of its own (issue 35.8: 1,000 distinct users watching one session). Latency is from just before the status change is written
 * (the baseline: just before it builds its frame) to the moment each subscriber has the
 * message. RSS per subscriber is the server's growth from before the clients connected to
 * after they all subscribed, both after a GC. The clients run in this process, on the same
 * cores as the servers; BENCH_ROUNDS repeats baseline and gateway and reports the median ratio.
 */
const SIZES = (process.env.BENCH_SUBSCRIBERS ?? '1000,10000').split(',').map(Number);
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'baseline,gateway,slow,per-subscriber,redis').split(','));
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const SLOW = Number(process.env.BENCH_SLOW ?? 20);
const FLOOD_KB = Number(process.env.BENCH_FLOOD_KB ?? 1024);
const REDIS = process.env.BENCH_REDIS_URL;
const MYSQL = process.env.BENCH_MYSQL_URL;
/** Writes a heap snapshot (all subscribed) and a CPU profile (publishing phase) of each server here. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const clientProfiler = new PhaseProfiler(PROFILE_DIR);
const CONNECT_CONCURRENCY = 250;
const SOCKETS_PER_USER = Number(process.env.BENCH_SOCKETS_PER_USER ?? 20);
const FILTERS = Number(process.env.BENCH_FILTERS ?? 200);
const FILTER_KIND = process.env.BENCH_FILTER_KIND ?? 'repo';
const FILTER_EVENTS = Number(process.env.BENCH_FILTER_EVENTS ?? 40);
/**
 * admin (default): org admins, who all see the same and so share one group per operation.
 * user: ordinary users of a public session; each user's results are computed for them
 * alone (one group per user: 500 groups for 10,000 subscribers).
 */
const ROLE = process.env.BENCH_ROLE ?? 'admin';
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR;

type Kind = 'baseline' | 'graphql-ws' | 'before' | 'gateway' | 'slow' | 'per-subscriber' | 'redis';

interface Result {
  readonly p50: number;
  readonly p99: number;
  readonly allReceivedP50: number;
  /** Median over events of the first receipt: the server's fixed cost per event before any frame goes out. */
  readonly firstReceivedP50: number;
  readonly rssPerSubscriberKb: number;
  readonly heapPerSubscriberKb: number;
  /** The server's CPU (user + system) per event, warm-up excluded: steadier than latency on a shared machine. */
  readonly cpuMsPerEvent: number;
  readonly executionsPerEvent: number;
  readonly serialisationsPerEvent: number;
  readonly load: string;
  readonly slow?: string;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const median = (values: number[]) => quantile([...values].sort((a, b) => a - b), 0.5);
const load = () => loadavg()[0]!.toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const token = (userId: string, asAdmin = ROLE === 'admin') => issueToken({ userId, orgId: 'bench', roles: asAdmin ? ['admin'] : [] }, BENCH_SECRET);
/** One token per SOCKETS_PER_USER subscribers. */
const tokens = (n: number) =>
  Array.from({ length: Math.ceil(n / SOCKETS_PER_USER) }, (_, u) => token(`bench-user-${u}`, ROLE === 'admin' || (ROLE === 'mixed' && u % 2 === 0)));

async function createMysqlDatabase(): Promise<string> {
  const name = `gw_fanout_${process.pid}_${randomUUID().slice(0, 8)}`;
  const conn = await createConnection({ uri: MYSQL! });
  await conn.query(`CREATE DATABASE ${name}`);
  await conn.end();
  const u = new URL(MYSQL!);
  u.pathname = `/${name}`;
  return u.toString();
}

async function dropMysqlDatabase(url: string): Promise<void> {
  const conn = await createConnection({ uri: MYSQL! });
  await conn.query(`DROP DATABASE ${new URL(url).pathname.slice(1)}`);
  await conn.end();
}

async function scenario(kind: Kind, subscribers: number): Promise<Result> {
  const loadBefore = load();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-fanout-'));
  const databaseUrl = kind === 'redis' ? await createMysqlDatabase() : null;
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    JWT_SECRET: BENCH_SECRET,
    DATA_DIR: dataDir,
    WS_SHARED_EXECUTION: String(kind !== 'per-subscriber'),
    // Ten thousand sockets answering pings would add noise; the measurement is the fan-out.
    WS_KEEPALIVE_MS: '0',
    ...(PROFILE_DIR ? { BENCH_PROFILE_DIR: PROFILE_DIR } : {}),
    ...(databaseUrl ? { REDIS_URL: REDIS!, REDIS_KEY_PREFIX: `bench-${randomUUID()}:`, DATABASE_URL: databaseUrl } : {}),
  };
  const script = kind === 'baseline' ? 'fanout-baseline-server.js' : kind === 'graphql-ws' ? 'fanout-graphql-ws-server.js' : kind === 'before' ? join(BEFORE_DIR!, 'dist-bench/bench/fanout-server.js') : 'fanout-server.js';
  const hub = await ServerProcess.start(script, env);
  const publisher = databaseUrl ? await ServerProcess.start(script, env) : hub;
  const sockets: WebSocket[] = [];
  const slowReaders: SlowReader[] = [];
  try {
    const { sessionId } = await publisher.ask<{ sessionId: string }>({ type: 'session' });
    const busy = kind === 'slow' ? await hub.ask<{ sessionId: string; turnId: string }>({ type: 'busyTurn' }) : null;
    const before = await hub.stats();
    const receipts = new Receipts();
    const credentials = tokens(subscribers);
    for (let i = 0; i < subscribers; i += CONNECT_CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONNECT_CONCURRENCY, subscribers - i) }, (_, j) =>
        fastSubscriber(hub.url, credentials[Math.floor((i + j) / SOCKETS_PER_USER)]!, sessionId, receipts),
      );
      sockets.push(...(await Promise.all(batch)));
    }
    if (busy) {
      // A user of their own each, so that resuming later is not refused by the per-user limit.
      for (let i = 0; i < SLOW; i++) slowReaders.push(await SlowReader.connect(hub.url, token(`bench-slow-${i}`), sessionId, busy));
    }
    const expected = subscribers + (busy ? 2 * SLOW : 0);
    await waitFor(async () => (await hub.stats()).subscribers === expected, 120_000, 'every subscription');
    const after = await hub.stats();
    const label = `${kind}-${subscribers}-${process.pid}`;
    await hub.ask({ type: 'profile', action: 'heap', label });
    await hub.ask({ type: 'profile', action: 'start', label });
    await clientProfiler.start();

    const latencies: number[] = [];
    const allReceived: number[] = [];
    const firstReceived: number[] = [];
    let cpuFrom = 0;
    for (let k = 0; k <= EVENTS; k++) {
      const sequence = k + 1;
      if (busy) await hub.ask({ type: 'flood', ...busy, bytes: FLOOD_KB * 1024 });
      // The same pause in every scenario: the streamed text goes out (or piles up) before the event, not during it.
      await sleep(200);
      const { started } = await publisher.ask<{ started: string }>({ type: 'publish', sessionId });
      await waitFor(() => receipts.count(sequence) === subscribers, 120_000, `event ${sequence} at every subscriber`);
      if (k === 0) {
        cpuFrom = (await hub.ask<{ micros: number }>({ type: 'cpu' })).micros;
        continue; // warm-up
      }
      const t0 = BigInt(started);
      const ms = (receipts.bySequence.get(sequence) ?? []).map((at) => Number(at - t0) / 1e6);
      latencies.push(...ms);
      allReceived.push(Math.max(...ms));
      firstReceived.push(Math.min(...ms));
    }
    const cpuTo = (await hub.ask<{ micros: number }>({ type: 'cpu' })).micros;
    await hub.ask({ type: 'profile', action: 'stop', label });
    await clientProfiler.stop(`${label}-clients`);
    const end = await hub.stats();
    const slow = busy ? await checkSlowReaders(hub, slowReaders, sessionId, receipts, end) : undefined;
    latencies.sort((a, b) => a - b);
    allReceived.sort((a, b) => a - b);
    firstReceived.sort((a, b) => a - b);
    return {
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      allReceivedP50: quantile(allReceived, 0.5),
      firstReceivedP50: quantile(firstReceived, 0.5),
      rssPerSubscriberKb: (after.rss - before.rss) / subscribers / 1024,
      heapPerSubscriberKb: (after.heapUsed - before.heapUsed) / subscribers / 1024,
      cpuMsPerEvent: (cpuTo - cpuFrom) / EVENTS / 1000,
      executionsPerEvent: (end.executions - after.executions) / (EVENTS + 1),
      serialisationsPerEvent: (end.serialisations - after.serialisations) / (EVENTS + 1),
      load: `${loadBefore}->${load()}`,
      ...(slow ? { slow } : {}),
    };
  } finally {
    await hub.stop();
    if (publisher !== hub) await publisher.stop();
    for (const socket of sockets) socket.terminate();
    for (const reader of slowReaders) reader.terminate();
    if (databaseUrl) await dropMysqlDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every slow reader was dropped with 4413, and resuming from its last event id lost nothing and repeated nothing. */
async function checkSlowReaders(hub: ServerProcess, readers: SlowReader[], sessionId: string, receipts: Receipts, stats: ServerStats): Promise<string> {
  const first = receipts.eventIds.get(1)!;
  const last = receipts.eventIds.get(EVENTS + 1)!;
  const codes = new Map<number, number>();
  // All at once: the server closes a socket whose close handshake does not finish within 30 s.
  for (const code of await Promise.all(readers.map((reader) => reader.drain(60_000)))) codes.set(code, (codes.get(code) ?? 0) + 1);
  const beforeDrop = readers.reduce((n, reader) => n + reader.eventIds.length, 0);
  for (const [i, reader] of readers.entries()) {
    await reader.resume(hub.url, token(`bench-slow-${i}`), sessionId, first - 1, last, 60_000);
    const want = Array.from({ length: last - first + 1 }, (_, j) => first + j);
    if (JSON.stringify(reader.eventIds) !== JSON.stringify(want)) throw new Error(`slow reader ${i} got ${JSON.stringify(reader.eventIds)}, want ${JSON.stringify(want)}`);
  }
  const closes = [...codes].map(([code, n]) => `${n}x ${code}`).join(', ');
  return `${readers.length} slow readers: ${stats.slowConsumersDropped} dropped by the server, closed with ${closes}; ${(beforeDrop / readers.length).toFixed(1)} events each before the drop, all ${last - first + 1} after resuming, none twice`;
}

/** The gateway's CPU per status change and the latency to its author's own subscriber, with `feeds` distinct filtered feeds of another user. */
async function filtersScenario(feeds: number): Promise<{ cpuMicrosPerEvent: number; p50: number; p99: number; executionsPerEvent: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-fanout-'));
  const hub = await ServerProcess.start('fanout-server.js', { NODE_ENV: 'production', JWT_SECRET: BENCH_SECRET, DATA_DIR: dataDir, WS_KEEPALIVE_MS: '0' });
  const sockets: WebSocket[] = [];
  try {
    const { sessionId } = await hub.ask<{ sessionId: string }>({ type: 'session' });
    const receipts = new Receipts();
    sockets.push(await fastSubscriber(hub.url, token('bench-owner', false), sessionId, receipts));
    const filters = Array.from({ length: feeds }, (_, i) => (FILTER_KIND === 'search' ? { search: `nothing-${i}` } : { repo: `bench-repo-${i}` }));
    sockets.push(...(await filteredFeeds(hub.url, token('bench-filters', false), filters, 100)));
    await waitFor(async () => (await hub.stats()).subscribers === feeds + 1, 60_000, 'every subscription');
    const latencies: number[] = [];
    let cpu = 0;
    const before = await hub.stats();
    for (let k = 0; k <= FILTER_EVENTS; k++) {
      await sleep(20);
      const { micros: from } = await hub.ask<{ micros: number }>({ type: 'cpu' });
      const { started } = await hub.ask<{ started: string }>({ type: 'publish', sessionId });
      await waitFor(() => receipts.count(k + 1) === 1, 30_000, `event ${k + 1}`);
      // What the event set off after the receipt (other feeds' work) is counted too.
      await sleep(30);
      const { micros: to } = await hub.ask<{ micros: number }>({ type: 'cpu' });
      if (k === 0) continue; // warm-up
      cpu += to - from;
      latencies.push(Number((receipts.bySequence.get(k + 1) ?? [])[0]! - BigInt(started)) / 1e6);
    }
    const end = await hub.stats();
    latencies.sort((a, b) => a - b);
    return {
      cpuMicrosPerEvent: cpu / FILTER_EVENTS,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      executionsPerEvent: (end.executions - before.executions) / (FILTER_EVENTS + 1),
    };
  } finally {
    await hub.stop();
    for (const socket of sockets) socket.terminate();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function filters(): Promise<void> {
  console.log(`one user's ${FILTERS} distinct sessionActivity filters (${FILTER_KIND}, none matching) and another user's turns: ${FILTER_EVENTS} status changes (after one warm-up)`);
  const line = (label: string, r: Awaited<ReturnType<typeof filtersScenario>>) =>
    console.log(`${label.padEnd(46)} CPU ${(r.cpuMicrosPerEvent / 1000).toFixed(2).padStart(6)} ms/event  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  ${r.executionsPerEvent.toFixed(1)} exec/event`);
  const none = await filtersScenario(0);
  line('no other feeds', none);
  const many = await filtersScenario(FILTERS);
  line(`+ ${FILTERS} distinct filtered feeds of another user`, many);
  console.log(`${''.padEnd(46)} with / without: CPU ${(many.cpuMicrosPerEvent / none.cpuMicrosPerEvent).toFixed(2)}x  p50 ${(many.p50 / none.p50).toFixed(2)}x  p99 ${(many.p99 / none.p99).toFixed(2)}x`);
}

const LABELS: Record<Kind, string> = {
  baseline: 'bare ws server, one prebuilt frame (baseline)',
  'graphql-ws': 'bare ws + graphql-ws server, one payload',
  before: 'gateway, one instance (BENCH_BEFORE_DIR)',
  gateway: 'gateway, one instance',
  slow: `gateway, one instance, + ${SLOW} slow readers`,
  'per-subscriber': 'gateway, WS_SHARED_EXECUTION=false',
  redis: 'gateway, two instances through Redis (MySQL)',
};
const row = (kind: Kind, n: number, r: Result) =>
  `${LABELS[kind].padEnd(46)} ${String(n).padStart(6)}  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  first ${r.firstReceivedP50.toFixed(1).padStart(5)} ms  all-received p50 ${r.allReceivedP50.toFixed(1).padStart(6)} ms  ${r.rssPerSubscriberKb.toFixed(1).padStart(5)} KB RSS/sub (heap ${r.heapPerSubscriberKb.toFixed(1)})  CPU ${r.cpuMsPerEvent.toFixed(1).padStart(6)} ms/event  ${r.executionsPerEvent.toFixed(0).padStart(5)} exec/event  ${r.serialisationsPerEvent.toFixed(0).padStart(5)} serialised/event  load ${r.load}` +
  (r.slow ? `\n${''.padEnd(46)} (exec and serialised/event include the streamed text's deltas)\n${''.padEnd(46)} ${r.slow}` : '');
const ratio = (what: string, a: Result, b: Result) =>
  `${''.padEnd(46)} ${what}: p50 ${(a.p50 / b.p50).toFixed(2)}x  p99 ${(a.p99 / b.p99).toFixed(2)}x  RSS/sub ${(a.rssPerSubscriberKb - b.rssPerSubscriberKb).toFixed(1)} KB (heap ${(a.heapPerSubscriberKb - b.heapPerSubscriberKb).toFixed(1)} KB) over  CPU/event ${(a.cpuMsPerEvent / b.cpuMsPerEvent).toFixed(2)}x`;

async function main(): Promise<void> {
  if (SCENARIOS.has('filters')) await filters();
  if ([...SCENARIOS].every((s) => s === 'filters')) return;
  console.log(`fan-out of turnStatusChanged: ${EVENTS} events (after one warm-up) per scenario; latency = write start -> receipt; subscribers: ${ROLE === 'mixed' ? 'users and admins' : `${ROLE}s`}, ${SOCKETS_PER_USER} sockets each; load = 1-minute load average before->after`);
  if (!REDIS || !MYSQL) console.log('two-instance scenario skipped: set BENCH_REDIS_URL and BENCH_MYSQL_URL');
  const has = (kind: Kind) =>
    kind === 'before' ? Boolean(BEFORE_DIR) && SCENARIOS.has('gateway') : SCENARIOS.has(kind) && (kind !== 'redis' || Boolean(REDIS && MYSQL));
  for (const n of SIZES) {
    const p99Ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      if (ROUNDS > 1) console.log(`round ${round}/${ROUNDS}`);
      const run = async (kind: Kind) => {
        if (!has(kind)) return null;
        const result = await scenario(kind, n);
        console.log(row(kind, n, result));
        return result;
      };
      const baseline = await run('baseline');
      const protocol = await run('graphql-ws');
      if (baseline && protocol) console.log(ratio('graphql-ws / baseline', protocol, baseline));
      const before = await run('before');
      if (baseline && before) console.log(ratio('before / baseline', before, baseline));
      const gateway = await run('gateway');
      if (before && gateway) console.log(ratio('gateway / before', gateway, before));
      if (baseline && gateway) {
        console.log(ratio('gateway / baseline', gateway, baseline));
        p99Ratios.push(gateway.p99 / baseline.p99);
      }
      const slow = await run('slow');
      if (slow && gateway) console.log(`${''.padEnd(46)} with slow readers / without: p50 ${(slow.p50 / gateway.p50).toFixed(2)}x  p99 ${(slow.p99 / gateway.p99).toFixed(2)}x`);
      if (slow && baseline) console.log(ratio('with slow readers / baseline', slow, baseline));
      if (round === 1) {
        await run('per-subscriber');
        await run('redis');
      }
    }
    if (p99Ratios.length > 1) console.log(`${n} subscribers: gateway / baseline p99, median of ${p99Ratios.length} rounds: ${median(p99Ratios).toFixed(2)}x (${p99Ratios.map((r) => r.toFixed(2)).join(', ')})`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import WebSocket from 'ws';
import { issueToken } from '../src/server/auth';

/**
 * Fan-out of turn status events to N WebSocket subscribers of one session.
 *
 *   npm run bench:build && node dist-bench/bench/fanout.bench.js
 *   BENCH_SUBSCRIBERS=1000,10000 BENCH_EVENTS=10 \
 *   BENCH_REDIS_URL=redis://127.0.0.1:6379 BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test \
 *     node dist-bench/bench/fanout.bench.js
 *
 * BENCH_SCENARIOS=shared,baseline,redis picks scenarios (all by default). For each N, in one run:
 *   - one instance, shared execution (the default): one execution per event, sent to all;
 *   - one instance, per-subscriber execution (WS_SHARED_EXECUTION=false): the baseline,
 *     what graphql-ws does by itself (one execution, with its own DataLoaders, per subscriber);
 *   - two instances through Redis (when BENCH_REDIS_URL and BENCH_MYSQL_URL are set): the
 *     event is committed on instance A, the subscribers are connected to instance B.
 * Latency is from just before the status change is written to the moment each subscriber
 * has the message (so it includes the commit); RSS is the subscribers' server process.
 * The clients run in this process, on the same cores as the servers.
 */
const SIZES = (process.env.BENCH_SUBSCRIBERS ?? '1000,10000').split(',').map(Number);
/** Which scenarios to run: shared, baseline, redis (all by default). */
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'shared,baseline,redis').split(','));
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10);
const REDIS = process.env.BENCH_REDIS_URL;
const MYSQL = process.env.BENCH_MYSQL_URL;
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
const CONNECT_CONCURRENCY = 250;
const QUERY = `subscription W($sessionId: ID!) {
  turnStatusChanged(sessionId: $sessionId) {
    eventId sequenceNumber previousStatus status statusTimeStamp createdByUser { id text }
    turn { id status sequenceNumber instructionSummary }
    session { id name turnCount lastTurnStatus ownerUser { id text } }
  }
}`;

class Server {
  private next = 1;
  private readonly pending = new Map<number, (reply: Record<string, unknown>) => void>();
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: Record<string, unknown>) => this.pending.get(m.id as number)?.(m));
  }

  static start(env: Record<string, string>): Promise<Server> {
    const child = fork(join(__dirname, 'fanout-server.js'), [], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', JWT_SECRET: SECRET, LOG_LEVEL: 'error', ...env },
      execArgv: ['--expose-gc'],
    });
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
      child.once('message', (m: { url: string }) => resolve(new Server(child, m.url)));
    });
  }

  ask<T extends Record<string, unknown>>(command: Record<string, unknown>): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error) reject(new Error(String(reply.error)));
        else resolve(reply as T);
      });
      this.child.send({ ...command, id });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }
}

interface Stats extends Record<string, unknown> {
  rss: number;
  subscribers: number;
  connections: number;
  executions: number;
}

/** Receipt times (hrtime ns) per turn sequence number, over all sockets. */
class Receipts {
  readonly bySequence = new Map<number, bigint[]>();
  record(sequence: number, at: bigint): void {
    let list = this.bySequence.get(sequence);
    if (!list) this.bySequence.set(sequence, (list = []));
    list.push(at);
  }
  count(sequence: number): number {
    return this.bySequence.get(sequence)?.length ?? 0;
  }
}

function subscriber(url: string, token: string, sessionId: string, receipts: Receipts): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      const at = process.hrtime.bigint();
      const text = String(data);
      if (text.startsWith('{"id"')) {
        // Cheaper than JSON.parse on 10,000 sockets: the sequence number is all we need.
        const match = /"sequenceNumber":(\d+)/.exec(text);
        if (match) receipts.record(Number(match[1]), at);
        return;
      }
      if (text.includes('"connection_ack"')) {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: QUERY, variables: { sessionId } } }));
        resolve(ws);
      }
    });
  });
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

interface Result {
  readonly p50: number;
  readonly p99: number;
  readonly allReceivedP50: number;
  readonly rssPerConnectionKb: number;
  readonly executionsPerEvent: number;
}

async function scenario(subscribers: number, options: { shared: boolean; redis: boolean }): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-fanout-'));
  let databaseUrl: string | null = null;
  if (options.redis) {
    const name = `gw_fanout_${process.pid}_${randomUUID().slice(0, 8)}`;
    const conn = await createConnection({ uri: MYSQL! });
    await conn.query(`CREATE DATABASE ${name}`);
    await conn.end();
    const u = new URL(MYSQL!);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
  }
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    WS_SHARED_EXECUTION: String(options.shared),
    // Ten thousand sockets answering pings would add noise; the measurement is the fan-out.
    WS_KEEPALIVE_MS: '0',
    ...(options.redis ? { REDIS_URL: REDIS!, REDIS_KEY_PREFIX: `bench-${randomUUID()}:`, DATABASE_URL: databaseUrl! } : {}),
  };
  const hub = await Server.start(env);
  const publisher = options.redis ? await Server.start(env) : hub;
  const sockets: WebSocket[] = [];
  try {
    const { sessionId } = await publisher.ask<{ sessionId: string }>({ type: 'session' });
    const before = await hub.ask<Stats>({ type: 'stats' });
    const receipts = new Receipts();
    const token = issueToken({ userId: 'bench-admin', orgId: 'bench', roles: ['admin'] }, SECRET);
    for (let i = 0; i < subscribers; i += CONNECT_CONCURRENCY) {
      const batch = Math.min(CONNECT_CONCURRENCY, subscribers - i);
      sockets.push(...(await Promise.all(Array.from({ length: batch }, () => subscriber(hub.url, token, sessionId, receipts)))));
    }
    await waitFor(async () => (await hub.ask<Stats>({ type: 'stats' })).subscribers === subscribers, 60_000, 'every subscription');
    const after = await hub.ask<Stats>({ type: 'stats' });

    const latencies: number[] = [];
    const allReceived: number[] = [];
    for (let k = 0; k <= EVENTS; k++) {
      const sequence = k + 1;
      const { started } = await publisher.ask<{ started: string }>({ type: 'publish', sessionId });
      await waitFor(() => receipts.count(sequence) === subscribers, 120_000, `event ${sequence} at every subscriber`);
      if (k === 0) continue; // warm-up
      const t0 = BigInt(started);
      const ms = (receipts.bySequence.get(sequence) ?? []).map((at) => Number(at - t0) / 1e6);
      latencies.push(...ms);
      allReceived.push(Math.max(...ms));
    }
    const end = await hub.ask<Stats>({ type: 'stats' });
    latencies.sort((a, b) => a - b);
    allReceived.sort((a, b) => a - b);
    return {
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      allReceivedP50: quantile(allReceived, 0.5),
      rssPerConnectionKb: (after.rss - before.rss) / subscribers / 1024,
      executionsPerEvent: (end.executions - after.executions) / (EVENTS + 1),
    };
  } finally {
    await hub.stop();
    if (publisher !== hub) await publisher.stop();
    for (const socket of sockets) socket.terminate();
    if (databaseUrl) {
      const conn = await createConnection({ uri: MYSQL! });
      await conn.query(`DROP DATABASE ${new URL(databaseUrl).pathname.slice(1)}`);
      await conn.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const row = (label: string, n: number, r: Result) =>
  `${label.padEnd(50)} ${String(n).padStart(6)}   p50 ${r.p50.toFixed(1).padStart(7)} ms   p99 ${r.p99.toFixed(1).padStart(7)} ms   all-received p50 ${r.allReceivedP50.toFixed(1).padStart(7)} ms   ${r.rssPerConnectionKb.toFixed(1).padStart(5)} KB RSS/conn   ${r.executionsPerEvent.toFixed(0).padStart(5)} executions/event`;

async function main(): Promise<void> {
  console.log(`fan-out of turnStatusChanged: ${EVENTS} events (after one warm-up) per scenario; latency = write start -> receipt`);
  if (!REDIS || !MYSQL) console.log('two-instance scenario skipped: set BENCH_REDIS_URL and BENCH_MYSQL_URL');
  for (const n of SIZES) {
    const shared = SCENARIOS.has('shared') ? await scenario(n, { shared: true, redis: false }) : null;
    if (shared) console.log(row('one instance, shared execution', n, shared));
    const baseline = SCENARIOS.has('baseline') ? await scenario(n, { shared: false, redis: false }) : null;
    if (baseline) console.log(row('one instance, per-subscriber execution (baseline)', n, baseline));
    if (shared && baseline) console.log(`${''.padEnd(50)} ${''.padStart(6)}   shared / baseline p50: ${(shared.p50 / baseline.p50).toFixed(2)}x   p99: ${(shared.p99 / baseline.p99).toFixed(2)}x`);
    if (REDIS && MYSQL && SCENARIOS.has('redis')) {
      console.log(row('two instances through Redis (MySQL), shared', n, await scenario(n, { shared: true, redis: true })));
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Client } from 'graphql-ws';
import { issueToken } from '../src/server/auth';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { ResumingFeed } from '../test/support/resuming-feed';
import { sseClient } from '../test/support/sse';
import { subscribe, wsClient, type SubscribingClient } from '../test/support/ws';
import { BENCH_SECRET, gatewayEnv, startChild, type BenchChild } from './bench-child';
import { createBenchDatabase } from './bench-database';
import { soakVerdict, type Sample, type SoakKind } from './soak-verdict';

/**
 * Issue 36 point 9: one gateway process (NODE_ENV=production, as `npm start` runs it) under
 * mixed load for SOAK_SECONDS: session lists, executes whose answers stream over
 * turnOutput, cancels of running turns, org-wide feeds over WebSocket and SSE that are dropped
 * and resumed with afterEventId, all at once. Every SOAK_SAMPLE_SECONDS it samples the process's
 * RSS (/proc), its JS heap, external memory and event-loop lag p99 (its own /metrics) and the p99 of each kind
 * of request in that window. It fails (exit 1) when RSS grows more than 10% after the warm-up
 * or a p99 doubles (see soak-verdict.ts), or when a request fails or a feed loses or repeats an event.
 *
 *   npm run bench:soak                          # 10 minutes, 2 of them warm-up
 *   SOAK_SECONDS=120 npm run bench:soak         # a short run (warm-up: a fifth of it, at most 120 s)
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench:soak
 */
const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? Math.min(120, Math.floor(SECONDS / 5)));
const LIST_CLIENTS = 4;
const EXECUTE_CLIENTS = 3;
const WS_FEEDS = 20;
const SSE_FEEDS = 5;
/** A feed is dropped and resumed this often (one feed at a time, round robin). */
const RECONNECT_EVERY_MS = 2_000;
/** Clients pause between requests: a steady load the machine can hold for ten minutes, not a saturating one. */
const THINK_MS = 50;
const METRICS_TOKEN = 'soak-metrics-token-soak-metrics-token';
const ORG = 'soak';
const users = Array.from({ length: EXECUTE_CLIENTS + 1 }, (_, i) => `soak-user-${i}`);
const tokenOf = (userId: string, admin = false) => issueToken({ userId, orgId: ORG, roles: admin ? ['admin'] : [] }, BENCH_SECRET, 24 * 3600);
const ADMIN = tokenOf('soak-admin', true);

const LIST = '{ agentSessions(first: 20) { totalCount edges { node { id name lastTurnStatus turnCount } } } }';
const EXECUTE_ASYNC = 'mutation E($input: AgentExecuteInput!) { executeAsync(input: $input) { sessionId turnId } }';
const CANCEL = 'mutation C($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { status } }';
const OUTPUT = 'subscription O($s: ID!, $t: ID!) { turnOutput(sessionId: $s, turnId: $t) { index } }';

/** Latencies and errors of each kind of request in the current window. */
class Window {
  private latencies: Record<SoakKind, number[]> = { list: [], execute: [], cancel: [] };
  readonly errors: string[] = [];
  errorCount = 0;

  record(kind: SoakKind, ms: number): void {
    this.latencies[kind].push(ms);
  }

  fail(kind: string, e: unknown): void {
    this.errorCount++;
    if (this.errors.length < 5) this.errors.push(`${kind}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 300));
  }

  /** This window's counts and p99s, and a fresh window. */
  take(): { counts: Record<SoakKind, number>; p99: Record<SoakKind, number> } {
    const at99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))] ?? 0;
    const l = this.latencies;
    this.latencies = { list: [], execute: [], cancel: [] };
    return {
      counts: { list: l.list.length, execute: l.execute.length, cancel: l.cancel.length },
      p99: { list: at99(l.list), execute: at99(l.execute), cancel: at99(l.cancel) },
    };
  }
}

async function gql<T>(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  if (res.status !== 200 || !body.data || body.errors) throw new Error(`${res.status} ${JSON.stringify(body.errors)}`);
  return body.data;
}

/** The heap and event-loop lag the gateway reports about itself (prom-client's default metrics). */
async function selfReport(url: string): Promise<SelfReport> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const value = (name: string, labels = '') => Number(new RegExp(`^${name}(?:\\{${labels}[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const mb = (bytes: number) => bytes / 2 ** 20;
  return {
    heapMb: mb(value('nodejs_heap_size_used_bytes')),
    externalMb: mb(value('nodejs_external_memory_bytes')),
    lagP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    oldSpaceMb: mb(value('nodejs_heap_space_size_total_bytes', 'space="old"')),
    oldSpaceUsedMb: mb(value('nodejs_heap_space_size_used_bytes', 'space="old"')),
    heapCommittedMb: mb(value('nodejs_heap_size_total_bytes')),
  };
}

type SelfReport = Pick<Sample, 'heapMb' | 'externalMb' | 'lagP99Ms' | 'heapCommittedMb' | 'oldSpaceMb' | 'oldSpaceUsedMb'>;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const fake: FakeOpenAI = await startFakeOpenAI({ record: false });
  // Answers stream in five pieces over ~100 ms; a turn to be cancelled streams for ~10 s.
  fake.setDefault((body) =>
    JSON.stringify(body.input ?? '').includes('cancel me')
      ? { kind: 'text', chunks: Array.from({ length: 50 }, (_, i) => `slow ${i} `), delayMs: 200 }
      : { kind: 'text', chunks: ['Soak ', 'answer ', 'in ', 'five ', 'pieces.'], delayMs: 20 },
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-soak-'));
  const mysql = process.env.BENCH_MYSQL_URL ? await createBenchDatabase(process.env.BENCH_MYSQL_URL, 'gw_bench_soak') : null;
  const env = {
    ...gatewayEnv(dataDir, '10', mysql?.url ?? null),
    ...(process.env.BENCH_REDIS_URL ? { REDIS_URL: process.env.BENCH_REDIS_URL, REDIS_KEY_PREFIX: `soak-${randomUUID()}:` } : {}),
    OPENAI_API_KEY: 'sk-soak',
    OPENAI_BASE_URL: fake.url,
    METRICS_TOKEN,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_EXECUTES_PER_MINUTE: '0',
    RATE_LIMIT_ORG_EXECUTES_PER_MINUTE: '0',
  };
  const logFile = join(dataDir, 'gateway.log');
  const gateway: BenchChild = await startChild(resolve(__dirname, 'list-gateway.js'), env, logFile);
  const url = gateway.url.replace(/\/graphql$/, '');
  console.log(
    `soak: ${SECONDS} s (warm-up ${WARMUP_SECONDS} s, a sample every ${SAMPLE_SECONDS} s) on ${mysql ? 'MySQL/MariaDB' : 'embedded SQLite'}` +
      `${env.REDIS_URL ? ' with Redis' : ''}; load average at start ${loadavg().map((l) => l.toFixed(1)).join(' ')}; gateway log ${logFile}`,
  );
  const agentContextId = (
    await gql<{ upsertAgentContext: { id: string } }>(url, ADMIN, 'mutation { upsertAgentContext(input: { name: "Soak", vectorCollection: "soak", defaultModel: "gpt-4.1-mini" }) { id } }')
  ).upsertAgentContext.id;

  const window = new Window();
  const deadline = Date.now() + SECONDS * 1000;
  const running = () => Date.now() < deadline;
  const closers: (() => unknown)[] = [];
  const clientFor = (kind: 'ws' | 'sse', token: string): SubscribingClient & { dispose(): unknown } => {
    const c = kind === 'ws' ? wsClient(url, token) : sseClient(url, token);
    closers.push(() => c.dispose());
    return c;
  };

  // Org-wide feeds (an admin's dashboards), resumed from their last event after every drop.
  const feeds = Array.from({ length: WS_FEEDS + SSE_FEEDS }, (_, i) => {
    const kind: 'ws' | 'sse' = i < WS_FEEDS ? 'ws' : 'sse';
    const feed = new ResumingFeed();
    const client = clientFor(kind, ADMIN);
    feed.connect(client);
    return { kind, feed, client };
  });
  let reconnects = 0;
  const reconnecting = (async () => {
    for (let i = 0; running(); i++) {
      await pause(RECONNECT_EVERY_MS);
      const f = feeds[i % feeds.length]!;
      f.feed.close();
      await (f.client as { dispose(): unknown }).dispose();
      f.client = clientFor(f.kind, ADMIN);
      f.feed.connect(f.client);
      reconnects++;
    }
  })();

  const listing = Array.from({ length: LIST_CLIENTS }, async (_, i) => {
    while (running()) {
      const t0 = performance.now();
      try {
        await gql(url, tokenOf(users[i % users.length]!), LIST);
        window.record('list', performance.now() - t0);
      } catch (e) {
        window.fail('list', e);
      }
      await pause(THINK_MS);
    }
  });

  // Each client continues its own session: executeAsync, then its answer over turnOutput until the turn ends.
  const executing = Array.from({ length: EXECUTE_CLIENTS }, async (_, i) => {
    const token = tokenOf(users[i]!);
    const ws: Client = wsClient(url, token);
    closers.push(() => ws.dispose());
    let session: { sessionId: string; turnId: string } | null = null;
    for (let n = 0; running(); n++) {
      const t0 = performance.now();
      try {
        const input: Record<string, unknown> = { agentContextId, instruction: `soak ${i}.${n}`, ...(session ?? {}) };
        const started: { sessionId: string; turnId: string } = (await gql<{ executeAsync: { sessionId: string; turnId: string } }>(url, token, EXECUTE_ASYNC, { input })).executeAsync;
        const output = subscribe(ws, OUTPUT, { s: started.sessionId, t: started.turnId });
        await output.done;
        if (output.results.length < 5 || output.results.some((r) => r.errors)) throw new Error(`turnOutput: ${JSON.stringify(output.results.slice(-1))}`);
        window.record('execute', performance.now() - t0);
        // Every 50th turn starts a new session, so no one session grows without bound.
        session = n % 50 === 49 ? null : { sessionId: started.sessionId, turnId: started.turnId };
      } catch (e) {
        window.fail('execute', e);
        session = null;
      }
      await pause(THINK_MS);
    }
  });

  const cancelling = (async () => {
    const token = tokenOf(users[EXECUTE_CLIENTS]!);
    while (running()) {
      try {
        const started = (await gql<{ executeAsync: { sessionId: string; turnId: string } }>(url, token, EXECUTE_ASYNC, { input: { agentContextId, instruction: 'cancel me' } }))
          .executeAsync;
        await pause(300);
        const t0 = performance.now();
        const { cancelTurn } = await gql<{ cancelTurn: { status: string } }>(url, token, CANCEL, { s: started.sessionId, t: started.turnId });
        if (cancelTurn.status !== 'CANCELLED') throw new Error(`cancelTurn: ${cancelTurn.status}`);
        window.record('cancel', performance.now() - t0);
      } catch (e) {
        window.fail('cancel', e);
      }
      await pause(500);
    }
  })();

  const samples: Sample[] = [];
  const started = Date.now();
  console.log('   t s   RSS MB  heap MB  V8 MB  old MB (used)  ext MB  lag p99 ms  lists  p99 ms  executes  p99 ms  cancels  p99 ms  errors  load');
  while (running()) {
    await pause(Math.min(SAMPLE_SECONDS * 1000, Math.max(0, deadline - Date.now())));
    const report = await selfReport(url).catch(
      (): SelfReport => ({ heapMb: NaN, externalMb: NaN, lagP99Ms: NaN, heapCommittedMb: NaN, oldSpaceMb: NaN, oldSpaceUsedMb: NaN }),
    );
    const { counts, p99 } = window.take();
    const sample: Sample = { atSeconds: (Date.now() - started) / 1000, rssMb: gateway.rssBytes() / 2 ** 20, ...report, p99, counts, errors: window.errorCount };
    samples.push(sample);
    const n = (x: number, w: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-').padStart(w);
    console.log(
      `${n(sample.atSeconds, 6)} ${n(sample.rssMb, 8, 1)} ${n(sample.heapMb, 8, 1)} ${n(sample.heapCommittedMb, 6, 1)} ${n(sample.oldSpaceMb, 7, 1)} (${n(sample.oldSpaceUsedMb, 5, 1)})` +
        ` ${n(sample.externalMb, 7, 1)} ${n(sample.lagP99Ms, 11, 1)} ${n(counts.list, 6)} ${n(p99.list, 7, 1)}` +
        ` ${n(counts.execute, 9)} ${n(p99.execute, 7, 1)} ${n(counts.cancel, 8)} ${n(p99.cancel, 7, 1)} ${n(window.errorCount, 7)}  ${loadavg()[0]!.toFixed(1)}`,
    );
  }
  await Promise.all([...listing, ...executing, cancelling, reconnecting]);
  await pause(1000);

  // Every feed, across all its reconnects, got each event once and in order: the durable log, replayed, is the reference.
  const replay = new ResumingFeed();
  // Another admin: the feeds' user already holds WS_MAX_CONNECTIONS_PER_USER sockets.
  replay.connect(clientFor('ws', tokenOf('soak-auditor', true)));
  const most = Math.max(...feeds.map((f) => f.feed.events.length));
  const replayStarted = Date.now();
  while (replay.events.length < most && Date.now() < replayStarted + 180_000) await pause(200);
  const replaySeconds = (Date.now() - replayStarted) / 1000;
  const reference = replay.events.map((e) => e.eventId);
  const feedProblems = feeds.flatMap((f, i) => {
    const got = f.feed.events.map((e) => e.eventId);
    const expected = reference.slice(0, got.length);
    return got.length === 0 || got.join() !== expected.join() ? [`feed ${i} (${f.kind}): ${got.length} events, not the log's first ${got.length}`] : [];
  });
  for (const close of closers) await close();
  await gateway.close();
  await fake.close();
  await mysql?.drop();

  const verdict = soakVerdict(samples, WARMUP_SECONDS);
  console.log(
    `\nevents: ${reference.length} in the log (replayed from the start in ${replaySeconds.toFixed(1)} s); ${feeds.length} feeds (${WS_FEEDS} WebSocket, ${SSE_FEEDS} SSE), ${reconnects} drops and resumes; ` +
      `feeds that lost, repeated or reordered an event: ${feedProblems.length}`,
  );
  for (const line of verdict.lines) console.log(line);
  const errors = samples.at(-1)?.errors ?? 0;
  console.log(`errors: ${errors}${window.errors.length ? ` (first: ${window.errors.join(' | ')})` : ''}`);
  if (replay.events.length < most) console.log(`the replay from the start got ${replay.events.length} of ${most} events: ${JSON.stringify(replay.breaks).slice(0, 300)}`);
  for (const p of feedProblems.slice(0, 5)) console.log(p);
  const failed = !verdict.ok || errors > 0 || feedProblems.length > 0;
  console.log(failed ? 'SOAK FAILED' : 'soak passed');
  if (failed) console.log(`gateway log kept: ${logFile}`);
  else rmSync(dataDir, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

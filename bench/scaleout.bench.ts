import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type WebSocket from 'ws';
import { loadConfig } from '../src/config';
import type { Caller } from '../src/domain/caller';
import { createLogger } from '../src/logger';
import { createGateway } from '../src/main';
import { issueToken } from '../src/server/auth';
import { BENCH_SECRET, gatewayEnv, startChild, type BenchChild } from './bench-child';
import { createBenchDatabase } from './bench-database';
import { fastSubscriber, Receipts, waitFor } from './fanout-clients';
import { fmt, runLoad, type LoadResult } from './load';

/**
 * Issue 40 point 6: the same load through HAProxy (deploy/haproxy/haproxy.cfg, Debian's
 * haproxy) in front of one gateway and in front of two, in one run, on MariaDB and Redis:
 * list throughput (agentSessions, first 25 with totalCount, BENCH_CONCURRENCY workers for
 * BENCH_SECONDS) and the fan-out of a turn's status changes to BENCH_SUBSCRIBERS (2,000)
 * WebSocket subscribers of one session (publish-to-receipt p50/p99 over BENCH_EVENTS events).
 * "One instance" is the same proxy with both of its servers pointing at that instance.
 *
 *   npm run bench:scaleout   # BENCH_MYSQL_URL, BENCH_REDIS_URL, BENCH_HAPROXY_PATH override the local defaults
 */
const MYSQL = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const HAPROXY = process.env.BENCH_HAPROXY_PATH ?? '/usr/sbin/haproxy';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 2000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10);
const SESSIONS = 500;
const ROOT = resolve(__dirname, '..', '..');

const alice: Caller = { userId: 'alice', userName: 'Alice', orgId: 'acme', orgName: 'Acme', roles: [] };
const LIST = JSON.stringify({
  query: 'query L { agentSessions(first: 25) { totalCount edges { node { id name lastTurnStatus turnCount ownerUser { id text } } } } }',
});

interface Proxy {
  readonly url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

async function startProxy(a: string, b: string): Promise<Proxy> {
  const [port, statsPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', join(ROOT, 'deploy/haproxy/haproxy.cfg')], {
    env: {
      PATH: process.env.PATH ?? '',
      HAPROXY_DNS: '127.0.0.1:53',
      GATEWAY_A_ADDR: a,
      GATEWAY_B_ADDR: b,
      HAPROXY_BIND: `127.0.0.1:${port}`,
      HAPROXY_STATS_BIND: `127.0.0.1:${statsPort}`,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const url = `http://127.0.0.1:${port}`;
  // Up once a request gets through (the servers start as UP and are checked from then on).
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200, 15_000, 'HAProxy to route');
  return {
    url,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Figures {
  readonly list: LoadResult;
  readonly fanoutP50Ms: number;
  readonly fanoutP99Ms: number;
}

/** Org admins (who see every session of the org), 20 sockets each: the default WS_MAX_CONNECTIONS_PER_USER. */
const watcherToken = (i: number) => issueToken({ userId: `watcher-${Math.floor(i / 20)}`, orgId: 'acme', roles: ['admin'] }, BENCH_SECRET);

async function measure(proxy: Proxy, token: string, sessionId: string, publish: (k: number) => Promise<void>): Promise<Figures> {
  const list = () =>
    fetch(`${proxy.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: LIST }).then(
      async (res) => {
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
        await res.arrayBuffer();
      },
    );
  await runLoad(list, CONCURRENCY, 2); // warm-up
  const listResult = await runLoad(list, CONCURRENCY, SECONDS);

  const receipts = new Receipts();
  const sockets: WebSocket[] = [];
  for (let i = 0; i < SUBSCRIBERS; i += 100) {
    const batch = Array.from({ length: Math.min(100, SUBSCRIBERS - i) }, (_, j) => fastSubscriber(proxy.url, watcherToken(i + j), sessionId, receipts));
    sockets.push(...(await Promise.all(batch)));
  }
  const latencies: number[] = [];
  for (let k = 0; k < EVENTS; k++) {
    const t0 = process.hrtime.bigint();
    await publish(k);
    await waitFor(() => [...receipts.bySequence.values()].some((l) => l.length === SUBSCRIBERS && l.every((at) => at >= t0)), 30_000, 'every subscriber to receive the event');
    const arrived = [...receipts.bySequence.values()].find((l) => l.length === SUBSCRIBERS && l.every((at) => at >= t0))!;
    for (const at of arrived) latencies.push(Number(at - t0) / 1e6);
    receipts.bySequence.clear();
  }
  for (const ws of sockets) ws.terminate();
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { list: listResult, fanoutP50Ms: at(0.5), fanoutP99Ms: at(0.99) };
}

async function main(): Promise<void> {
  const database = await createBenchDatabase(MYSQL, 'bench_scaleout');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-scaleout-'));
  const env = { ...gatewayEnv(dataDir, '10', database.url), REDIS_URL: REDIS, REDIS_KEY_PREFIX: `bench-scaleout-${process.pid}:`, LOG_LEVEL: 'warn' };
  const writer = await createGateway(loadConfig({ ...env, PORT: '0', NODE_ENV: 'test' }), createLogger('silent'), { sweeper: false, webhookSender: false });
  const children: BenchChild[] = [];
  try {
    for (let i = 0; i < SESSIONS; i++) await writer.sessions.lifecycle.createSession(alice, { name: `scaleout ${i}`, agentContextId: 'ac' });
    const watched = await writer.sessions.lifecycle.createSession(alice, { name: 'watched', agentContextId: 'ac' });
    // Each event: a turn added (PENDING); the previous one is completed first, so the session is never busy.
    let previous: string | null = null;
    const publish = async () => {
      if (previous) await writer.sessions.lifecycle.completeTurn(alice, watched.id, previous, { agentAnswerSummary: 'done', fullAgentAnswerUrl: null, openAIResponseId: null, openAIResponseReceivedDate: new Date() });
      previous = (await writer.sessions.lifecycle.addTurn(alice, watched.id, { instructionSummary: 'fan out' })).id;
    };
    const token = issueToken({ userId: alice.userId, orgId: alice.orgId }, BENCH_SECRET);
    const script = join(__dirname, 'list-gateway.js');
    children.push(await startChild(script, env, join(dataDir, 'a.log')));
    children.push(await startChild(script, env, join(dataDir, 'b.log')));
    const [a, b] = children.map((c) => new URL(c.url).host) as [string, string];

    const one = await startProxy(a, a);
    const single = await measure(one, token, watched.id, publish);
    await one.stop();
    const two = await startProxy(a, b);
    const double = await measure(two, token, watched.id, publish);
    await two.stop();

    console.log(`bench:scaleout through HAProxy on MariaDB + Redis (${SECONDS} s of list load at ${CONCURRENCY} workers; ${SUBSCRIBERS} subscribers, ${EVENTS} events)`);
    console.log(`Everything (database, Redis, HAProxy, both gateways, this load generator) shares this machine's ${cpus().length} CPUs.`);
    for (const [name, f] of [['one instance ', single], ['two instances', double]] as const) {
      console.log(`${name}  list: ${fmt(f.list)}   fan-out to ${SUBSCRIBERS}: p50 ${f.fanoutP50Ms.toFixed(1)} ms  p99 ${f.fanoutP99Ms.toFixed(1)} ms`);
    }
    console.log(`two / one: list throughput x${(double.list.perSecond / single.list.perSecond).toFixed(2)}, fan-out p99 x${(double.fanoutP99Ms / single.fanoutP99Ms).toFixed(2)}`);
  } finally {
    for (const c of children) await c.close();
    await writer.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

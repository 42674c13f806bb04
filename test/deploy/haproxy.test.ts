import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'graphql-ws';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createGateway, type Gateway } from '../../src/main';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { HAPROXY_CONFIG, HAPROXY_DNS, serverStates, startHaproxy, until, type RunningHaproxy, type ServerState } from '../support/haproxy';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithHaproxy, describeWithMysql, describeWithRedis, haproxyPath, redisUrl } from '../support/services';
import { sseClient } from '../support/sse';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { addTurn, completeTurn } from '../support/turns';
import { alice } from '../support/testkit/users';
import { subscribe, wsClient } from '../support/ws';
import { durationMs, readProjectFile } from './deploy-files';

const CONFIG = HAPROXY_CONFIG;
const DNS = HAPROXY_DNS;

/** `haproxy -c` in zero-warning mode: a warning fails the check like an error. */
function check(config: string, env: Record<string, string>): { ok: boolean; output: string } {
  const out = spawnSync(haproxyPath!, ['-c', '-dW', '-f', config], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HAPROXY_DNS: DNS, ...env },
    timeout: 15_000,
  });
  return { ok: out.status === 0, output: `${out.stdout}${out.stderr}` };
}

/** The `timeout <name> <value>` lines of the defaults section, in milliseconds. */
function defaultTimeouts(): Record<string, number> {
  const defaults = /^defaults\n([\s\S]*?)\n\S/m.exec(readProjectFile('deploy/haproxy/haproxy.cfg'))![1]!;
  return Object.fromEntries([...defaults.matchAll(/^\s+timeout ([\w-]+) (\S+)/gm)].map(([, name, value]): [string, number] => [name!, durationMs(value!)]));
}

describeWithHaproxy('deploy/haproxy/haproxy.cfg', () => {
  const addresses = { GATEWAY_A_ADDR: '127.0.0.1:4001', GATEWAY_B_ADDR: '127.0.0.1:4002' };

  it('is accepted by HAProxy without a warning', () => {
    expect(check(CONFIG, addresses)).toEqual({ ok: true, output: expect.stringContaining('Configuration file is valid') });
  });

  it('is refused without a backend address, and as a copy with a misspelt keyword', () => {
    const missing = check(CONFIG, { GATEWAY_A_ADDR: addresses.GATEWAY_A_ADDR });
    expect(missing).toEqual({ ok: false, output: expect.stringMatching(/'server' expects <name> and <addr>/) });
    const dir = mkdtempSync(join(tmpdir(), 'gw-haproxy-'));
    try {
      const broken = readProjectFile('deploy/haproxy/haproxy.cfg').replace('timeout tunnel 1h', 'timeout tunel 1h');
      writeFileSync(join(dir, 'haproxy.cfg'), broken);
      expect(check(join(dir, 'haproxy.cfg'), addresses)).toEqual({ ok: false, output: expect.stringMatching(/got 'tunel'/) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps idle WebSockets and event streams past the keepalive interval, and a synchronous execute past its provider deadline', () => {
    const defaults = loadConfig({});
    const timeouts = defaultTimeouts();
    for (const name of ['client', 'server', 'tunnel']) expect(timeouts[name]).toBeGreaterThan(2 * defaults.live.wsKeepAliveMs);
    expect(timeouts.server).toBeGreaterThan(defaults.execute.llmTimeoutMs);
    // The request head still has to arrive promptly.
    expect(timeouts['http-request']).toBeLessThan(timeouts.client!);
    // The gateway never closes an idle connection the proxy may still reuse (that is a 502).
    expect(defaults.httpKeepAliveTimeoutMs).toBeGreaterThan(Math.max(timeouts['http-keep-alive']!, timeouts.client!));
  });

  it('lets a request head HAProxy let through still arrive within the gateway\'s own HTTP_HEADERS_TIMEOUT_MS', () => {
    expect(defaultTimeouts()['http-request']).toBeLessThanOrEqual(loadConfig({}).http.headersTimeoutMs);
  });

  describeWithRedis('in front of two gateway processes', () => {
    describeWithMysql('sharing MySQL and Redis', () => {
      const SECRET = 'haproxy-test-secret-haproxy-test-secret';
      const token = issueToken({ userId: 'alice', orgId: 'acme' }, SECRET);
      let env: Record<string, string>;
      let toMysqlForB: TcpProxy;
      let a: ServerProcess;
      let b: ServerProcess;
      let writer: Gateway;
      let haproxy: RunningHaproxy;
      let proxyUrl: string;
      let statsUrl: string;
      const clients: { dispose(): void | Promise<void> }[] = [];

      beforeAll(async () => {
        env = {
          JWT_SECRET: SECRET,
          DATABASE_URL: await createMysqlDatabase(),
          REDIS_URL: redisUrl!,
          REDIS_KEY_PREFIX: `haproxy-${randomUUID()}:`,
          DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-haproxy-')),
        };
        const mysql = new URL(env.DATABASE_URL!);
        toMysqlForB = await startTcpProxy(mysql.hostname, Number(mysql.port || 3306));
        const viaProxy = new URL(env.DATABASE_URL!);
        viaProxy.hostname = '127.0.0.1';
        viaProxy.port = String(toMysqlForB.port);
        a = await startServerProcess(env);
        b = await startServerProcess({ ...env, DATABASE_URL: viaProxy.toString() });
        writer = await createGateway(loadConfig({ ...env, PORT: '0' }), createLogger('silent'));
        haproxy = await startHaproxy(new URL(a.url).host, new URL(b.url).host);
        proxyUrl = haproxy.url;
        statsUrl = haproxy.statsUrl;
        await until(async () => (await serverStates(statsUrl)).get('api/a')?.status === 'UP', 'a is UP');
        await until(async () => (await serverStates(statsUrl)).get('api/b')?.status === 'UP', 'b is UP');
      }, 90_000);

      afterAll(async () => {
        await Promise.all(clients.map(async (c) => c.dispose()));
        await haproxy?.stop();
        for (const started of [a, b]) if (started) await stopServerProcess(started.child);
        await writer?.close();
        await toMysqlForB?.close();
        if (env?.DATABASE_URL) await dropMysqlDatabase(env.DATABASE_URL);
        if (env?.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
      });

      const listSessions = () =>
        fetch(`${proxyUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ query: '{ agentSessions(first: 1) { totalCount } }' }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data?: unknown; errors?: unknown } }));

      it('spreads GraphQL requests over both instances', async () => {
        const before = await serverStates(statsUrl);
        const answers = await Promise.all(Array.from({ length: 10 }, listSessions));
        expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
        expect(answers.filter((r) => r.body.errors !== undefined)).toEqual([]);
        const after = await serverStates(statsUrl);
        for (const server of ['api/a', 'api/b']) expect(after.get(server)!.requests).toBeGreaterThan(before.get(server)!.requests);
      });

      it('carries a WebSocket and an event-stream subscription, each event as it happens', async () => {
        const STATUS = `subscription S($sessionId: ID!, $after: ID) {
          turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { sequenceNumber status }
        }`;
        type Status = { turnStatusChanged: { sequenceNumber: number; status: string } };
        const before = await serverStates(statsUrl);
        const session = await writer.sessions.lifecycle.createSession(alice, { name: 'through the proxy', agentContextId: 'ac' });
        const ws: Client = wsClient(proxyUrl, token);
        const sse = sseClient(proxyUrl, token);
        clients.push(ws, sse);
        const overWs = subscribe<Status>(ws, STATUS, { sessionId: session.id, after: '0' });
        const overSse = subscribe<Status>(sse, STATUS, { sessionId: session.id, after: '0' });
        const turn = await addTurn(writer.sessions.lifecycle, alice, session.id);
        // The first event arrives while the turn is still running: nothing holds the streams back.
        for (const sub of [overWs, overSse]) await sub.waitFor(1, 10_000);
        await completeTurn(writer.sessions.lifecycle, alice, session.id, turn.id);
        for (const sub of [overWs, overSse]) {
          const events = (await sub.waitFor(2, 10_000)).map((r) => r.data!.turnStatusChanged);
          expect(events.map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(['1:PENDING', '1:COMPLETED']);
        }
        // Both went to the backend for long-lived connections.
        const after = await serverStates(statsUrl);
        const live = (states: Map<string, ServerState>) => states.get('live/a')!.requests + states.get('live/b')!.requests;
        expect(live(after) - live(before)).toBe(2);
      });

      it('stops routing to an instance whose /readyz fails, and routes to it again once it recovers', async () => {
        toMysqlForB.cut('reset');
        try {
          await until(async () => (await serverStates(statsUrl)).get('api/b')?.status === 'DOWN', 'b is DOWN', 20_000);
          expect((await serverStates(statsUrl)).get('api/b')).toMatchObject({ checkStatus: 'L7STS', checkCode: '503' });
          const answers = await Promise.all(Array.from({ length: 10 }, listSessions));
          expect(answers.map((r) => [r.status, r.body.errors])).toEqual(Array(10).fill([200, undefined]));
        } finally {
          toMysqlForB.restore();
        }
        await until(async () => (await serverStates(statsUrl)).get('api/b')?.status === 'UP', 'b is UP again', 20_000);
      }, 60_000);
    });
  });
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  createGatewayClient,
  ExecuteAsyncDocument,
  GatewayError,
  SessionListDocument,
  TurnStatusChangedDocument,
  type ConnectionStatus,
  type GatewayClient,
} from '../../packages/client/src';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createGateway, type Gateway } from '../../src/main';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { freePort, serverStates, startHaproxy, until, type RunningHaproxy } from '../support/haproxy';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithHaproxy, describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { alice, boss } from '../support/testkit/users';

const SECRET = 'rolling-deploy-secret-rolling-deploy-secret';
const ANSWER = ['a slow', ' answer', ' in four', ' parts'];
const SESSIONS = 3;

/**
 * What a real client retries, and only for calls that are safe to repeat (queries, and executes
 * with an idempotencyKey): no answer came (NETWORK_ERROR), the proxy had no instance to give
 * (502/503), or an instance refused a new turn while draining (SERVICE_UNAVAILABLE).
 */
const retryReason = (e: unknown): string | null => {
  if (!(e instanceof GatewayError)) return null;
  if (e.code === 'NETWORK_ERROR' || e.code === 'SERVICE_UNAVAILABLE') return e.code;
  return e.status === 502 || e.status === 503 ? `HTTP ${e.status}` : null;
};

/** Issue 40 point 5: restart each of two gateways behind HAProxy while clients query, execute and subscribe. */
describeWithHaproxy('a rolling deploy behind HAProxy', () => {
  describeWithRedis('of two gateway processes', () => {
    describeWithMysql('on MariaDB and Redis', () => {
      let env: Record<string, string>;
      /** The provider stand-in both share (as they share OpenAI); each instance names its own OPENAI_PROJECT_ID. */
      let fake: FakeOpenAI;
      const ports: Record<'a' | 'b', number> = { a: 0, b: 0 };
      const servers: Partial<Record<'a' | 'b', ServerProcess>> = {};
      let writer: Gateway;
      let haproxy: RunningHaproxy;
      const clients: GatewayClient[] = [];

      beforeAll(async () => {
        fake = await startFakeOpenAI();
        fake.setDefault(() => ({ kind: 'text', chunks: ANSWER, delayMs: 300 }));
        env = {
          JWT_SECRET: SECRET,
          DATABASE_URL: await createMysqlDatabase(),
          REDIS_URL: redisUrl!,
          REDIS_KEY_PREFIX: `rolling-${randomUUID()}:`,
          DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-rolling-')),
          OPENAI_API_KEY: 'sk-test-key',
          OPENAI_BASE_URL: fake.url,
          SHUTDOWN_GRACE_MS: '10000',
        };
        writer = await createGateway(loadConfig({ ...env, PORT: '0' }), createLogger('silent'), { sweeper: false, webhookSender: false });
        ports.a = await freePort();
        ports.b = await freePort();
        servers.a = await startServerProcess(envOf('a'));
        servers.b = await startServerProcess(envOf('b'));
        haproxy = await startHaproxy(`127.0.0.1:${ports.a}`, `127.0.0.1:${ports.b}`);
        for (const name of ['a', 'b']) await until(async () => (await serverStates(haproxy.statsUrl)).get(`api/${name}`)?.status === 'UP', `${name} is UP`);
      }, 120_000);

      afterAll(async () => {
        await Promise.all(clients.map((c) => c.dispose()));
        await haproxy?.stop();
        for (const server of Object.values(servers)) if (server) await stopServerProcess(server.child);
        await writer?.close();
        await fake?.close();
        if (env?.DATABASE_URL) await dropMysqlDatabase(env.DATABASE_URL);
        if (env?.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
      });

      const client = (transport: 'ws' | 'sse') => {
        const made = createGatewayClient({
          url: `${haproxy.url}/graphql`,
          token: issueToken({ userId: alice.userId, orgId: alice.orgId }, SECRET),
          transport,
          webSocketImpl: WebSocket,
          retry: { initialDelayMs: 50, maxDelayMs: 500 },
        });
        clients.push(made);
        return made;
      };

      const envOf = (name: 'a' | 'b') => ({ ...env, PORT: String(ports[name]), OPENAI_PROJECT_ID: `proj-${name}` });
      const providerCallsOf = (name: 'a' | 'b') => fake.requests.filter((r) => r.headers['openai-project'] === `proj-${name}`).length;

      /**
       * Just after a provider call starts there (its answer takes 1.2 s: the turn is in flight),
       * SIGTERM (it must drain and exit 0), then a new process on the same port, UP in HAProxy again.
       */
      async function restart(name: 'a' | 'b'): Promise<void> {
        const before = providerCallsOf(name);
        await until(async () => providerCallsOf(name) > before, `a turn in flight on ${name}`, 20_000);
        expect(await stopServerProcess(servers[name]!.child)).toBe(0);
        servers[name] = await startServerProcess(envOf(name));
        await until(async () => (await serverStates(haproxy.statsUrl)).get(`api/${name}`)?.status === 'UP', `${name} is UP again`, 30_000);
      }

      it('answers every query, completes every turn once, and gives every subscriber every status change once, in order', async () => {
        const { contexts } = writer.services;
        const agent = await contexts.upsertAgentContext(boss, { name: 'Rolling', vectorCollection: 'rolling', defaultModel: 'gpt-4.1-mini' });
        const sessions = await Promise.all(
          Array.from({ length: SESSIONS }, (_, i) => writer.sessions.lifecycle.createSession(alice, { name: `rolling ${i}`, agentContextId: agent.id })),
        );
        // Subscribers over both transports, each following every session.
        const seen = new Map<string, string[]>();
        const statuses = new Map<GatewayClient, ConnectionStatus>();
        for (const transport of ['ws', 'ws', 'sse', 'sse'] as const) {
          const subscriber = client(transport);
          subscriber.onStatus((s) => statuses.set(subscriber, s));
          for (const session of sessions) {
            const key = `${transport}#${clients.length}:${session.id}`;
            seen.set(key, []);
            subscriber.subscribe(TurnStatusChangedDocument, { sessionId: session.id }, {
              next: (data) => seen.get(key)!.push(`${data.turnStatusChanged.turn.id}:${data.turnStatusChanged.status}:${data.turnStatusChanged.eventId}`),
              error: (e) => seen.get(key)!.push(`error:${String(e)}`),
            });
          }
        }
        await until(async () => [...statuses.values()].filter((s) => s === 'connected').length === 4, 'every subscriber is connected');

        const api = client('ws');
        let running = true;
        const failures: string[] = [];
        const retries: Record<string, number> = {};
        let lists = 0;
        async function withRetry<T>(call: () => Promise<T>): Promise<T> {
          for (;;) {
            try {
              return await call();
            } catch (e) {
              const reason = retryReason(e);
              if (!reason) throw e;
              retries[reason] = (retries[reason] ?? 0) + 1;
              await new Promise((r) => setTimeout(r, 100));
            }
          }
        }
        const listers = Array.from({ length: 3 }, async () => {
          while (running) {
            await withRetry(() => api.query(SessionListDocument, { first: 5 })).then(
              () => lists++,
              (e: unknown) => failures.push(`list: ${String(e)}`),
            );
          }
        });
        // One executor per session: a turn, then (once it ended) the next.
        const started: { sessionId: string; turnId: string }[] = [];
        const executors = sessions.map(async (session) => {
          while (running) {
            const input = { agentContextId: agent.id, sessionId: session.id, instruction: 'During a deploy', idempotencyKey: randomUUID() };
            try {
              const ids = (await withRetry(() => api.mutate(ExecuteAsyncDocument, { input }))).executeAsync;
              started.push(ids);
              await until(async () => (await turnStatus(ids)).status !== 'PENDING', `turn ${ids.turnId} ended`, 30_000);
            } catch (e) {
              failures.push(`execute: ${String(e)}`);
            }
          }
        });
        const turnStatus = async (ids: { sessionId: string; turnId: string }) =>
          (await writer.sessions.reads.getTurn(alice, ids.sessionId, ids.turnId))!;

        await new Promise((r) => setTimeout(r, 2000));
        await restart('a');
        await new Promise((r) => setTimeout(r, 1000));
        await restart('b');
        await new Promise((r) => setTimeout(r, 2000));
        running = false;
        await Promise.all([...listers, ...executors]);

        expect(failures).toEqual([]);
        expect(lists).toBeGreaterThan(20);
        expect(started.length).toBeGreaterThanOrEqual(SESSIONS * 2);
        for (const ids of started) {
          expect(await turnStatus(ids)).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: ANSWER.join('') });
        }
        // No execute ran twice: one provider call per turn, and each session holds exactly the turns started in it.
        expect(fake.requests).toHaveLength(started.length);
        expect(new Set(started.map((t) => t.turnId)).size).toBe(started.length);
        for (const session of sessions) {
          const turns = started.filter((t) => t.sessionId === session.id).map((t) => t.turnId);
          expect((await writer.sessions.reads.getSession(alice, session.id))?.turnCount).toBe(turns.length);
          const expected = turns.flatMap((id) => [`${id}:PENDING`, `${id}:COMPLETED`]);
          for (const [key, events] of seen) {
            if (!key.endsWith(session.id)) continue;
            await until(async () => events.length >= expected.length, `${key} saw every event`, 15_000).catch(() => undefined);
            expect(events.map((e) => e.split(':').slice(0, 2).join(':'))).toEqual(expected);
            const ids = events.map((e) => BigInt(e.split(':')[2]!));
            expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
          }
        }
        // Retries happened only where a client would make them; how many, for the reader of the log.
        console.info(`rolling deploy: ${lists} list queries, ${started.length} turns, retried calls: ${JSON.stringify(retries)}`);
      }, 180_000);
    });
  });
});

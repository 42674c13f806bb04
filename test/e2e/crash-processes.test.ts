import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/caller';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { ResumingFeed, type ActivityEvent } from '../support/resuming-feed';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { sseClient } from '../support/sse';
import { EXECUTE_ASYNC } from '../support/testkit';
import { boss, user } from '../support/testkit/users';
import { waitUntil, wsClient } from '../support/ws';

const SECRET = 'e2e-crash-secret-e2e-crash-secret-e2e-crash';
const tokenOf = (c: Caller) => issueToken({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, SECRET);
const LEASE_SECONDS = 5;
/** What a loaded machine (and the sweeper's interval, a quarter of the lease) may add to the lease. */
const MARGIN_MS = 15_000;
const TURNS = 50;
/** Ten users with five turns each: within every user's budget (MAX_TURNS_IN_FLIGHT_PER_USER is 10). */
const USERS = Array.from({ length: 10 }, (_, i) => user(`crash-user-${i}`));
/** A slow provider: every answer streams for about 12 s, so every turn is mid-answer when the kill comes. */
const CHUNKS = 24;
const CHUNK_DELAY_MS = 500;
const TURN_ERRORS = 'query T($sessionId: ID!, $turnId: ID!) { agentSessionTurn(sessionId: $sessionId, turnId: $turnId) { errors } }';
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

interface Started {
  readonly on: 'a' | 'b';
  readonly caller: Caller;
  readonly input: { agentContextId: string; instruction: string; idempotencyKey: string };
  readonly accepted: { sessionId: string; turnId: string };
}

async function gql<T>(server: ServerProcess, caller: Caller, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf(caller)}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (!body.data) throw new Error(`${res.status} ${JSON.stringify(body.errors)}\n${server.errorLogs.join('\n')}`);
  return body.data;
}

const ids = (events: readonly ActivityEvent[]) => events.map((e) => e.eventId);

/**
 * Issue 36 point 8: a gateway killed (SIGKILL: no shutdown hook runs) in the middle of turns,
 * with another instance on the same MariaDB and Redis. Its turns must end (the other
 * instance's sweeper fails them once their lease runs out), its live clients must resume on
 * the other instance without losing or repeating an event, and retried executes must not run twice.
 */
describeWithRedis('a gateway process killed mid-turn', () => {
  describeWithMysql('next to another one on MySQL/MariaDB and Redis', () => {
    let env: Record<string, string>;
    let fake: FakeOpenAI;
    let a: ServerProcess;
    let b: ServerProcess;
    const disposers: (() => unknown)[] = [];

    beforeAll(async () => {
      fake = await startFakeOpenAI();
      fake.setDefault(() => ({ kind: 'text', chunks: Array.from({ length: CHUNKS }, (_, i) => `part ${i} `), delayMs: CHUNK_DELAY_MS }));
      env = {
        JWT_SECRET: SECRET,
        DATABASE_URL: await createMysqlDatabase(),
        REDIS_URL: redisUrl!,
        REDIS_KEY_PREFIX: `e2e-crash-${randomUUID()}:`,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-e2e-crash-')),
        OPENAI_API_KEY: 'sk-crash-test',
        OPENAI_BASE_URL: fake.url,
        TURN_LEASE_SECONDS: String(LEASE_SECONDS),
      };
      // Both at once on the fresh database, as a rollout starts them: the migrations run once.
      [a, b] = await Promise.all([startServerProcess(env, 120_000), startServerProcess(env, 120_000)]);
    }, 180_000);

    afterAll(async () => {
      for (const dispose of disposers) await dispose();
      for (const server of [a, b]) if (server) await stopServerProcess(server.child);
      await fake?.close();
      if (env.DATABASE_URL) await dropMysqlDatabase(env.DATABASE_URL);
      if (env.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
    });

    it('ends every turn within the lease, resumes its WebSocket and SSE clients on the other instance losslessly, and runs no key twice', async () => {
      const agentContextId = (
        await gql<{ upsertAgentContext: { id: string } }>(a, boss, 'mutation { upsertAgentContext(input: { name: "Crash", vectorCollection: "crash", defaultModel: "gpt-4.1-mini" }) { id } }')
      ).upsertAgentContext.id;

      // The clients of A (one per transport) and a reference client of B, which stays connected throughout.
      const client = (server: ServerProcess, kind: 'ws' | 'sse') => {
        const c = kind === 'ws' ? wsClient(server.url, tokenOf(boss)) : sseClient(server.url, tokenOf(boss));
        disposers.push(() => c.dispose());
        return c;
      };
      const viaWs = new ResumingFeed();
      const viaSse = new ResumingFeed();
      const reference = new ResumingFeed();
      viaWs.connect(client(a, 'ws'));
      viaSse.connect(client(a, 'sse'));
      reference.connect(client(b, 'ws'));

      const started: Started[] = await Promise.all(
        Array.from({ length: TURNS }, async (_, i) => {
          const on = i % 2 === 0 ? 'a' : 'b';
          const caller = USERS[i % USERS.length]!;
          const input = { agentContextId, instruction: `crash turn ${i}`, idempotencyKey: `crash-key-${i}` };
          const data = await gql<{ executeAsync: { sessionId: string; turnId: string } }>(on === 'a' ? a : b, caller, EXECUTE_ASYNC, { input });
          return { on, caller, input, accepted: { sessionId: data.executeAsync.sessionId, turnId: data.executeAsync.turnId } } as Started;
        }),
      );
      // Every turn's provider call is streaming; the clients of A have seen its turns start.
      await fake.waitForRequests(TURNS, 30_000);
      await waitUntil(() => viaWs.events.length >= TURNS && viaSse.events.length >= TURNS, 30_000, 'the PENDING events on A');
      expect(fake.open).toBe(TURNS);

      a.child.kill('SIGKILL');
      const killedAt = Date.now();
      await new Promise((r) => a.child.once('exit', r));
      await waitUntil(() => !viaWs.isConnected && !viaSse.isConnected, 10_000, "A's clients to notice");
      // They reconnect to the instance that lives, from the last event each saw.
      viaWs.connect(client(b, 'ws'));
      viaSse.connect(client(b, 'sse'));

      const terminal = () => reference.events.filter((e) => TERMINAL.has(e.status));
      await waitUntil(() => terminal().length >= TURNS, LEASE_SECONDS * 1000 + MARGIN_MS, 'every turn to end');
      expect(Date.now() - killedAt).toBeLessThan(LEASE_SECONDS * 1000 + MARGIN_MS);
      const endOf = new Map(terminal().map((e) => [e.turnId, e.status]));
      for (const s of started) expect([s.on, endOf.get(s.accepted.turnId)]).toEqual([s.on, s.on === 'a' ? 'FAILED' : 'COMPLETED']);
      // A died in mid-answer: its 25 provider streams were cut, B's 25 ran to the end.
      expect(fake.requests.filter((r) => r.closedByClient)).toHaveLength(TURNS / 2);
      // The turns of A say why they failed; nothing went wrong inside B meanwhile.
      const failures = await Promise.all(
        started
          .filter((s) => s.on === 'a')
          .map(async (s) => (await gql<{ agentSessionTurn: { errors: string[] } }>(b, s.caller, TURN_ERRORS, s.accepted)).agentSessionTurn.errors),
      );
      for (const errors of failures) expect(errors).toEqual([expect.stringMatching(/^interrupted: the gateway instance running this turn stopped/)]);
      expect(b.errorLogs).toEqual([]);

      // Every client has every event once, in the same order; the durable log agrees.
      await waitUntil(() => viaWs.events.length >= 2 * TURNS && viaSse.events.length >= 2 * TURNS, 15_000, 'the resumed clients to catch up');
      await new Promise((r) => setTimeout(r, 1000));
      expect(reference.events).toHaveLength(2 * TURNS);
      expect(new Set(ids(reference.events)).size).toBe(2 * TURNS);
      expect(ids(viaWs.events)).toEqual(ids(reference.events));
      expect(ids(viaSse.events)).toEqual(ids(reference.events));
      const replay = new ResumingFeed();
      replay.connect(client(b, 'ws'));
      await waitUntil(() => replay.events.length >= 2 * TURNS, 15_000, 'the replay from the start');
      expect(ids(replay.events)).toEqual(ids(reference.events));
      for (const feed of [viaWs, viaSse]) expect(feed.breaks).toHaveLength(1);

      // Each client retries its execute on B (it cannot know whether A acted on it): the first call's turn, run once.
      const retried = await Promise.all(
        started.map(async (s) => (await gql<{ executeAsync: { turnId: string } }>(b, s.caller, EXECUTE_ASYNC, { input: s.input })).executeAsync.turnId),
      );
      expect(retried).toEqual(started.map((s) => s.accepted.turnId));
      expect(fake.requests).toHaveLength(TURNS);
      const sessions = await gql<{ agentSessions: { totalCount: number; edges: { node: { turnCount: number } }[] } }>(
        b,
        boss,
        '{ agentSessions(first: 100) { totalCount edges { node { turnCount } } } }',
      );
      expect(sessions.agentSessions.totalCount).toBe(TURNS);
      expect(sessions.agentSessions.edges.every((e) => e.node.turnCount === 1)).toBe(true);
    }, 240_000);
  });
});

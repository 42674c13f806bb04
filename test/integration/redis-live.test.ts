import { randomUUID } from 'node:crypto';
import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { ScratchRedis } from '../support/redis-server';
import { describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { startTcpProxy, type CutMode, type TcpProxy } from '../support/tcp-proxy';
import { addTurn, completeTurn } from '../support/turns';
import { sleep, subscribe, waitUntil, wsClient } from '../support/ws';
import { alice, boss, startGateway, user, type TestGateway } from '../support/testkit';

const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { eventId sequenceNumber status turn { status } session { name } }
}`;
const OUTPUT = 'subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { index textDelta } }';
type Status = { turnStatusChanged: { eventId: string; sequenceNumber: number; status: string; turn: { status: string }; session: { name: string } } };
type Output = { turnOutput: { index: number; textDelta: string } };

/** Two gateways sharing one MySQL database and one Redis (under a key prefix of their own). */
async function twoInstances(redis: string, extra: Record<string, string> = {}): Promise<{ a: TestGateway; b: TestGateway; dispose: () => Promise<void> }> {
  const databaseUrl = await createMysqlDatabase();
  const bus = { url: redis, keyPrefix: `test-${randomUUID()}:` };
  const a = await startGateway({ database: { url: databaseUrl }, bus, env: extra });
  const b = await startGateway({ database: { url: databaseUrl }, bus, env: extra });
  return {
    a,
    b,
    async dispose() {
      await Promise.all([a.close(), b.close()]);
      await dropMysqlDatabase(databaseUrl);
    },
  };
}

const readiness = async (t: TestGateway) =>
  (await (await fetch(`${t.url}/readyz`)).json()) as { status: string; checks: Record<string, string> };

const tokenFor = (t: TestGateway, c: Caller) =>
  t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });

describeWithRedis('live delivery through Redis', () => {
  describeWithMysql('two gateway instances sharing MySQL and Redis', () => {
    let a: TestGateway;
    let b: TestGateway;
    let dispose: () => Promise<void>;
    const clients: Client[] = [];
    const connect = (t: TestGateway, c: Caller) => {
      const client = wsClient(t.url, tokenFor(t, c));
      clients.push(client);
      return client;
    };
    beforeAll(async () => {
      ({ a, b, dispose } = await twoInstances(redisUrl!));
    });
    afterEach(() => Promise.all(clients.splice(0).map(async (c) => c.dispose())));
    afterAll(() => dispose());

    it('delivers turns changed on A to subscribers on B, in order', async () => {
      const session = await a.gateway.sessions.lifecycle.createSession(alice, { name: 'across', agentContextId: 'ac' });
      const onB = subscribe<Status>(connect(b, alice), STATUS, { sessionId: session.id });
      const adminOnB = subscribe<Status>(connect(b, boss), STATUS, { sessionId: session.id });
      await waitUntil(() => b.gateway.live.executor.subscriberCount === 2);
      const sessions = a.gateway.sessions.lifecycle;
      for (let i = 0; i < 3; i++) {
        const turn = await addTurn(sessions, alice, session.id);
        await completeTurn(sessions, alice, session.id, turn.id);
      }
      for (const sub of [onB, adminOnB]) {
        const events = (await sub.waitFor(6)).map((r) => r.data!.turnStatusChanged);
        expect(events.map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(['1:PENDING', '1:COMPLETED', '2:PENDING', '2:COMPLETED', '3:PENDING', '3:COMPLETED']);
        expect(events.every((e) => e.session.name === 'across')).toBe(true);
      }
    });

    it('keeps one order for changes made on both instances at once', async () => {
      const session = await a.gateway.sessions.lifecycle.createSession(alice, { name: 'both', agentContextId: 'ac', isPublic: true });
      const onA = subscribe<Status>(connect(a, alice), STATUS, { sessionId: session.id });
      const onB = subscribe<Status>(connect(b, alice), STATUS, { sessionId: session.id });
      await waitUntil(() => a.gateway.live.executor.subscriberCount === 1 && b.gateway.live.executor.subscriberCount === 1);
      await Promise.all(
        [a, b, a, b, a, b].map((t, i) => addTurn(t.gateway.sessions.lifecycle, user(`writer-${i}`), session.id)),
      );
      const idsOnA = (await onA.waitFor(6)).map((r) => Number(r.data!.turnStatusChanged.eventId));
      const idsOnB = (await onB.waitFor(6)).map((r) => Number(r.data!.turnStatusChanged.eventId));
      expect(idsOnA).toEqual([...idsOnA].sort((x, y) => x - y));
      expect(idsOnB).toEqual(idsOnA);
      expect(onA.data.map((d) => d.turnStatusChanged.sequenceNumber)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('gives a late joiner on B the text streamed on A so far, then the rest', async () => {
      const sessions = a.gateway.sessions.lifecycle;
      const session = await sessions.createSession(alice, { name: 'text', agentContextId: 'ac' });
      const turn = await addTurn(sessions, alice, session.id);
      const ref = { orgId: 'acme', sessionId: session.id, turnId: turn.id };
      a.gateway.output.append({ ...ref, index: 0, textDelta: 'The ' });
      a.gateway.output.append({ ...ref, index: 1, textDelta: 'answer ' });
      const late = subscribe<Output>(connect(b, alice), OUTPUT, { sessionId: session.id, turnId: turn.id });
      await late.waitFor(2);
      a.gateway.output.append({ ...ref, index: 2, textDelta: 'is 42' });
      await late.waitFor(3);
      await completeTurn(sessions, alice, session.id, turn.id, 'The answer is 42');
      a.gateway.output.end(ref);
      await late.done;
      expect(late.data.map((d) => d.turnOutput.index)).toEqual([0, 1, 2]);
      expect(late.data.map((d) => d.turnOutput.textDelta).join('')).toBe('The answer is 42');
    });
  });

  describeWithMysql('when Redis goes down and comes back', () => {
    let redis: ScratchRedis;
    let a: TestGateway;
    let b: TestGateway;
    let dispose: () => Promise<void>;
    beforeAll(async () => {
      redis = await ScratchRedis.start();
      ({ a, b, dispose } = await twoInstances(redis.url));
    }, 30_000);
    afterAll(async () => {
      await dispose();
      await redis.dispose();
    });

    it('keeps queries and mutations working, reports it in /readyz, and delivers what happened meanwhile once Redis is back', async () => {
      const sessions = a.gateway.sessions.lifecycle;
      const session = await sessions.createSession(alice, { name: 'outage', agentContextId: 'ac' });
      const client = wsClient(b.url, tokenFor(b, alice));
      const feed = subscribe<Status>(client, STATUS, { sessionId: session.id });
      await waitUntil(() => b.gateway.live.executor.subscriberCount === 1);
      const first = await addTurn(sessions, alice, session.id);
      await feed.waitFor(1);

      await redis.down();
      await waitUntil(async () => (await readiness(b)).checks.subscriptions === 'unavailable', 10_000, 'readyz to notice');
      const ready = await fetch(`${b.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'degraded', checks: { database: 'ok', blobs: 'ok', subscriptions: 'unavailable' } });

      const token = tokenFor(a, alice);
      const started = Date.now();
      await completeTurn(sessions, alice, session.id, first.id);
      const second = await addTurn(sessions, alice, session.id);
      expect(Date.now() - started).toBeLessThan(2_000);
      const renamed = await a.gql<{ updateAgentSession: { name: string } }>(token, 'mutation($id: ID!) { updateAgentSession(id: $id, patch: { name: "outage (renamed)" }) { name } }', { id: session.id });
      expect(renamed.body.data?.updateAgentSession.name).toBe('outage (renamed)');
      const listed = await b.gql<{ agentSessions: { totalCount: number } }>(token, '{ agentSessions { totalCount } }');
      expect(listed.body.data?.agentSessions.totalCount).toBeGreaterThan(0);
      const outputClient = wsClient(b.url, tokenFor(b, alice));
      const output = subscribe(outputClient, OUTPUT, { sessionId: session.id, turnId: second.id });
      await output.done;
      expect(output.results[0]?.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      await outputClient.dispose();

      await redis.up();
      await waitUntil(async () => (await readiness(b)).status === 'ready', 15_000, 'readyz to recover');
      // Caught up on reconnect, before any new event could reveal the gap.
      await feed.waitFor(3, 10_000);
      await completeTurn(sessions, alice, session.id, second.id);
      const events = (await feed.waitFor(4, 10_000)).map((r) => r.data!.turnStatusChanged);
      expect(events.map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(['1:PENDING', '1:COMPLETED', '2:PENDING', '2:COMPLETED']);
      expect(events.map((e) => Number(e.eventId))).toEqual([1, 2, 3, 4]);
      await new Promise((r) => setTimeout(r, 200));
      expect(feed.results).toHaveLength(4);
      await client.dispose();
    }, 60_000);
  });

  describeWithMysql('when the line to Redis is cut and restored', () => {
    let proxy: TcpProxy;
    let a: TestGateway;
    let b: TestGateway;
    let dispose: () => Promise<void>;
    const clients: Client[] = [];
    beforeAll(async () => {
      const { hostname, port } = new URL(redisUrl!);
      proxy = await startTcpProxy(hostname, Number(port || 6379));
      ({ a, b, dispose } = await twoInstances(`redis://127.0.0.1:${proxy.port}`, { REDIS_TIMEOUT_MS: '300' }));
    }, 30_000);
    afterEach(async () => {
      proxy.restore();
      await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
    });
    afterAll(async () => {
      await dispose();
      await proxy.close();
    });
    const connect = (t: TestGateway) => {
      const client = wsClient(t.url, tokenFor(t, alice));
      clients.push(client);
      return client;
    };
    const statusesOf = (feed: { data: Status[] }) => feed.data.map((d) => `${d.turnStatusChanged.sequenceNumber}:${d.turnStatusChanged.status}`);

    it.each<CutMode>(['reset', 'blackhole'])(
      'cut by %s: subscribers that stayed, resumed during or resumed after the outage get every status event once; executes keep working',
      async (mode) => {
        const { contexts } = a.gateway.services;
        const sessions = a.gateway.sessions.lifecycle;
        const session = await sessions.createSession(alice, { name: `outage by ${mode}`, agentContextId: 'ac' });
        const stayed = subscribe<Status>(connect(b), STATUS, { sessionId: session.id });
        await waitUntil(() => b.gateway.live.executor.subscriberCount === 1);
        const first = await addTurn(sessions, alice, session.id);
        const [seen] = await stayed.waitFor(1);
        const resumeFrom = seen!.data!.turnStatusChanged.eventId;

        proxy.cut(mode);
        await waitUntil(async () => (await readiness(b)).checks.subscriptions === 'unavailable', 10_000, 'readyz to notice');
        expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
        await completeTurn(sessions, alice, session.id, first.id);
        const second = await addTurn(sessions, alice, session.id);
        // Budgets fall back to per-instance counts: executes are still admitted.
        const agent = await contexts.upsertAgentContext(boss, { name: 'Backend', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' });
        const executed = await a.gql<{ executeAsync: { turnId: string } }>(tokenFor(a, alice), 'mutation($i: AgentExecuteInput!) { executeAsync(input: $i) { turnId } }', {
          i: { agentContextId: agent.id, instruction: 'during the Redis outage' },
        });
        expect(executed.body.errors).toBeUndefined();
        const duringOutage = subscribe<Status>(connect(b), STATUS, { sessionId: session.id, after: resumeFrom });
        await duringOutage.waitFor(2, 10_000);

        proxy.restore();
        await waitUntil(async () => (await readiness(b)).status === 'ready', 20_000, 'readyz to recover');
        const afterOutage = subscribe<Status>(connect(b), STATUS, { sessionId: session.id, after: resumeFrom });
        await afterOutage.waitFor(2, 10_000);
        await completeTurn(sessions, alice, session.id, second.id);

        const expected = ['1:PENDING', '1:COMPLETED', '2:PENDING', '2:COMPLETED'];
        await stayed.waitFor(4, 20_000);
        await duringOutage.waitFor(3, 20_000);
        await afterOutage.waitFor(3, 20_000);
        await sleep(300);
        expect(statusesOf(stayed)).toEqual(expected);
        expect(statusesOf(duringOutage)).toEqual(expected.slice(1));
        expect(statusesOf(afterOutage)).toEqual(expected.slice(1));
        for (const feed of [stayed, duringOutage, afterOutage]) {
          const ids = feed.data.map((d) => Number(d.turnStatusChanged.eventId));
          expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
        }
      },
      60_000,
    );
  });
});

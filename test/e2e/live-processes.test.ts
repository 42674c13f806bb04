import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'graphql-ws';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createGateway, type Gateway } from '../../src/main';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { startServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { addTurn, completeTurn } from '../support/turns';
import { subscribe, wsClient } from '../support/ws';
import { alice, bob } from '../support/testkit/users';

const SECRET = 'e2e-live-secret-e2e-live-secret-e2e-live';
const token = (userId: string) => issueToken({ userId, orgId: 'acme' }, SECRET);

const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { eventId sequenceNumber status session { name } }
}`;
type Status = { turnStatusChanged: { eventId: string; sequenceNumber: number; status: string; session: { name: string } } };

describeWithRedis('two gateway processes', () => {
  describeWithMysql('sharing MySQL and Redis', () => {
    let env: Record<string, string>;
    let a: ServerProcess;
    let b: ServerProcess;
    let writer: Gateway;
    const clients: Client[] = [];

    beforeAll(async () => {
      env = {
        DATABASE_URL: await createMysqlDatabase(),
        REDIS_URL: redisUrl!,
        REDIS_KEY_PREFIX: `e2e-${randomUUID()}:`,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-e2e-live-')),
      };
      a = await startServerProcess({ JWT_SECRET: SECRET, ...env });
      b = await startServerProcess({ JWT_SECRET: SECRET, ...env });
      // Turns are created and finished by the orchestrator, which has no HTTP entry point on
      // this branch yet; a third gateway instance in this process plays that part.
      writer = await createGateway(loadConfig({ ...env, PORT: '0', JWT_SECRET: SECRET }), createLogger('silent'));
    }, 90_000);

    afterAll(async () => {
      await Promise.all(clients.map(async (c) => c.dispose()));
      for (const started of [a, b]) if (started && started.child.exitCode === null) started.child.kill('SIGTERM');
      await writer?.close();
      await dropMysqlDatabase(env.DATABASE_URL!);
      rmSync(env.DATA_DIR!, { recursive: true, force: true });
    });

    const connect = (server: ServerProcess, userId: string, onClosed?: (code: number) => void) => {
      const client = wsClient(server.url, token(userId), onClosed ? { onClosed } : {});
      clients.push(client);
      return client;
    };

    it('delivers every change to subscribers on both processes, in order, and resumes across a reconnect', async () => {
      const sessions = writer.sessions.lifecycle;
      const session = await sessions.createSession(alice, { name: 'shared', agentContextId: 'ac', isPublic: true });
      // Resuming from 0 replays everything stored, then continues live: no timing to guess.
      const onA = subscribe<Status>(connect(a, 'alice'), STATUS, { sessionId: session.id, after: '0' });
      const bobOnB = connect(b, 'bob');
      const onB = subscribe<Status>(bobOnB, STATUS, { sessionId: session.id, after: '0' });
      const first = await addTurn(sessions, alice, session.id);
      await onB.waitFor(1, 10_000);
      await completeTurn(sessions, alice, session.id, first.id);
      const second = await addTurn(sessions, bob, session.id);
      await completeTurn(sessions, bob, session.id, second.id);
      const expected = ['1:PENDING', '1:COMPLETED', '2:PENDING', '2:COMPLETED'];
      for (const sub of [onA, onB]) {
        const events = (await sub.waitFor(4, 10_000)).map((r) => r.data!.turnStatusChanged);
        expect(events.map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(expected);
      }
      expect(onA.data.map((d) => d.turnStatusChanged.eventId)).toEqual(onB.data.map((d) => d.turnStatusChanged.eventId));

      // B drops its connection; a turn happens; a new connection to A resumes from what B saw last.
      const lastSeen = onB.data.at(-1)!.turnStatusChanged.eventId;
      bobOnB.terminate();
      const third = await addTurn(sessions, bob, session.id);
      await completeTurn(sessions, bob, session.id, third.id);
      const resumed = subscribe<Status>(connect(a, 'bob'), STATUS, { sessionId: session.id, after: lastSeen });
      const events = (await resumed.waitFor(2, 10_000)).map((r) => r.data!.turnStatusChanged);
      expect(events.map((e) => `${e.sequenceNumber}:${e.status}`)).toEqual(['3:PENDING', '3:COMPLETED']);
    });

    it('stops a subscriber on B once the session is made private through A', async () => {
      const sessions = writer.sessions.lifecycle;
      const session = await sessions.createSession(alice, { name: 'going private', agentContextId: 'ac', isPublic: true });
      const watcher = subscribe<Status>(connect(b, 'bob'), STATUS, { sessionId: session.id, after: '0' });
      const turn = await addTurn(sessions, alice, session.id);
      await watcher.waitFor(1, 10_000);
      const res = await fetch(`${a.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token('alice')}` },
        body: JSON.stringify({ query: `mutation { updateAgentSession(id: "${session.id}", patch: { isPublic: false }) { isPublic } }` }),
      });
      expect(((await res.json()) as { data: unknown }).data).toEqual({ updateAgentSession: { isPublic: false } });
      await completeTurn(sessions, alice, session.id, turn.id, 'private answer');
      await watcher.done;
      expect(watcher.results).toHaveLength(2);
      expect(watcher.results[1]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });

    it('on SIGTERM closes its WebSockets with 1012 (service restart) and exits cleanly', async () => {
      const session = await writer.sessions.lifecycle.createSession(alice, { name: 'bye', agentContextId: 'ac' });
      const codes: number[] = [];
      const sub = subscribe(connect(a, 'alice', (code) => codes.push(code)), STATUS, { sessionId: session.id, after: '0' });
      await addTurn(writer.sessions.lifecycle, alice, session.id);
      await sub.waitFor(1, 10_000);
      const exited = new Promise<number | null>((r) => a.child.once('exit', (code) => r(code)));
      a.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(codes).toEqual([1012]);
    });
  });
});

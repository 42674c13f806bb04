import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import type { SessionRecord } from '../../src/domain/session';
import { admin, user } from '../support/callers';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { addTurn, completeTurn, failTurn } from '../support/turns';
import { subscribe, waitUntil, wsClient } from '../support/ws';

const alice = user('alice');
const bob = user('bob');
const boss = admin('boss');
const mallory = user('mallory', 'globex');

const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) {
    eventId sessionId turnId sequenceNumber previousStatus status statusTimeStamp
    createdByUser { id text }
    turn { id status sequenceNumber instructionSummary agentAnswerSummary session { id name } }
    session { id name lastTurnStatus turnCount agentContextName participants { id } }
  }
}`;

interface StatusEvent {
  eventId: string;
  sessionId: string;
  turnId: string;
  sequenceNumber: number;
  previousStatus: string | null;
  status: string;
  statusTimeStamp: string;
  createdByUser: { id: string; text: string };
  turn: { id: string; status: string; sequenceNumber: number; instructionSummary: string; agentAnswerSummary: string | null; session: { id: string; name: string } };
  session: { id: string; name: string; lastTurnStatus: string | null; turnCount: number; agentContextName: string | null; participants: { id: string }[] };
}

let t: TestGateway;
const clients: Client[] = [];
const tokenOf = (c: Caller, ttl?: number) =>
  t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, ttl);
const connect = (c: Caller) => {
  const client = wsClient(t.url, tokenOf(c));
  clients.push(client);
  return client;
};
const subscribers = () => t.gateway.live.executor.subscriberCount;

let agentContextId: string;
beforeAll(async () => {
  t = await startTestGateway();
  const ac = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Backend Platform', vectorCollection: 'backend', defaultModel: 'm' });
  agentContextId = ac.id;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  await waitUntil(() => subscribers() === 0, 5_000, 'subscribers to leave');
});
afterAll(() => t.close());

const newSession = (owner: Caller, name: string, extra: Partial<{ isPublic: boolean; repo: string; workspaceId: string }> = {}): Promise<SessionRecord> =>
  t.gateway.services.sessions.createSession(owner, { name, agentContextId, ...extra });

describe('turnStatusChanged', () => {
  it('delivers every status change of the session once, in order, with turn and session resolved', async () => {
    const { sessions } = t.gateway.services;
    const mine = await newSession(alice, 'status feed');
    const other = await newSession(alice, 'someone else');
    const sub = subscribe<{ turnStatusChanged: StatusEvent }>(connect(alice), STATUS, { sessionId: mine.id });
    await waitUntil(() => subscribers() === 1);

    const t1 = await addTurn(sessions, alice, mine.id, 'first');
    await addTurn(sessions, alice, other.id, 'not for this subscriber');
    await completeTurn(sessions, alice, mine.id, t1.id, 'answer one');
    const t2 = await addTurn(sessions, alice, mine.id, 'second');
    await failTurn(sessions, alice, mine.id, t2.id);
    const t3 = await addTurn(sessions, alice, mine.id, 'third');
    await sessions.cancelTurn(alice, mine.id, t3.id);

    const events = (await sub.waitFor(6)).map((r) => r.data!.turnStatusChanged);
    expect(events.map((e) => [e.sequenceNumber, e.previousStatus, e.status])).toEqual([
      [1, null, 'PENDING'],
      [1, 'PENDING', 'COMPLETED'],
      [2, null, 'PENDING'],
      [2, 'PENDING', 'FAILED'],
      [3, null, 'PENDING'],
      [3, 'PENDING', 'CANCELLED'],
    ]);
    const ids = events.map((e) => Number(e.eventId));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(6);
    expect(events.every((e) => e.sessionId === mine.id && e.session.id === mine.id && e.turn.session.id === mine.id)).toBe(true);
    expect(events[1]).toMatchObject({
      turnId: t1.id,
      createdByUser: { id: 'alice', text: 'Name of alice' },
      turn: { id: t1.id, status: 'COMPLETED', instructionSummary: 'first', agentAnswerSummary: 'answer one' },
      session: { name: 'status feed', agentContextName: 'Backend Platform', participants: [{ id: 'alice' }] },
    });
    expect(sub.results.every((r) => r.errors === undefined)).toBe(true);
  });

  it('refuses a session the caller may not read, in or out of its org, as not found', async () => {
    const privateOfBob = await newSession(bob, 'private of bob');
    for (const caller of [alice, mallory]) {
      const sub = subscribe(connect(caller), STATUS, { sessionId: privateOfBob.id });
      await sub.done;
      expect(sub.results).toHaveLength(1);
      expect(sub.results[0]!.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });
});

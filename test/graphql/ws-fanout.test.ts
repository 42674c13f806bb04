import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { GatewayCloseCode } from '../../src/server/ws-limits';
import { addTurn, completeTurn } from '../support/turns';
import { RawSocket, sleep, subscribe, waitUntil, wsClient } from '../support/ws';
import { admin, alice, startGateway, type TestGateway } from '../support/testkit';

const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { eventId sequenceNumber status turn { id status } session { id name turnCount } }
}`;
const OUTPUT = `subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { index textDelta } }`;
type Status = { turnStatusChanged: { eventId: string; sequenceNumber: number; status: string } };

/** A result of the status subscription, bare or inside a protocol message. */
const carriesEvent = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return false;
  const { data, payload } = value as { data?: Record<string, unknown> | null; payload?: unknown };
  return (typeof data === 'object' && data !== null && 'turnStatusChanged' in data) || carriesEvent(payload);
};
const tokenOf = (t: TestGateway, c: Caller) => t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });

describe('fan-out of one group', () => {
  let t: TestGateway;
  const clients: Client[] = [];
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
  });
  afterEach(() => Promise.all(clients.splice(0).map(async (c) => c.dispose())));
  afterAll(() => t.close());

  it('executes and serialises each event once for 40 subscribers, and each receives it under its own operation id', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(alice, { name: 'watched by many', agentContextId: 'ac', isPublic: true });
    // Two admins (one visibility), twenty operations each on one socket: forty members of one group.
    const subs = [admin('boss-1'), admin('boss-2')].flatMap((a) => {
      const client = wsClient(t.url, tokenOf(t, a));
      clients.push(client);
      return Array.from({ length: 20 }, () => subscribe<Status>(client, STATUS, { sessionId: session.id }));
    });
    await waitUntil(() => executor.subscriberCount === 40, 10_000, 'forty subscribers');
    expect(executor.groupCount).toBe(1);
    const before = { executions: executor.executions, serialisations: executor.serialisations };
    // Whoever would serialise per subscriber (the executor, the transport) shows up here.
    const stringify = jest.spyOn(JSON, 'stringify');

    const turn = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, turn.id);
    await addTurn(sessions, alice, session.id);
    await Promise.all(subs.map((s) => s.waitFor(3)));
    await sleep(50);
    const stringified = stringify.mock.calls.filter(([value]) => carriesEvent(value)).length;
    stringify.mockRestore();

    expect(executor.executions - before.executions).toBe(3);
    expect(executor.serialisations - before.serialisations).toBe(3);
    expect(stringified).toBe(3);
    expect(subs.every((s) => s.results.length === 3)).toBe(true);
    expect(new Set(subs.map((s) => JSON.stringify(s.results))).size).toBe(1);
    expect(subs[0]!.data.map((d) => [d.turnStatusChanged.sequenceNumber, d.turnStatusChanged.status])).toEqual([
      [1, 'PENDING'],
      [1, 'COMPLETED'],
      [2, 'PENDING'],
    ]);
  });
});

describe('sockets whose operations share an id', () => {
  let t: TestGateway;
  const sockets: RawSocket[] = [];
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
  });
  afterAll(async () => {
    sockets.forEach((s) => s.ws.terminate());
    await t.close();
  });

  it('each get every event under its own id, the frame of the event they were sent and no other', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(alice, { name: 'watched by many', agentContextId: 'ac', isPublic: true });
    // Three sockets subscribe as "1" (as many clients number their operations), one as "other": one group, two frames per event.
    const ids = ['1', '1', '1', 'other'];
    for (const id of ids) {
      const socket = new RawSocket(t.url);
      sockets.push(socket);
      await socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${tokenOf(t, admin('boss-1'))}` } });
      await socket.waitForMessage('connection_ack');
      await socket.send({ id, type: 'subscribe', payload: { query: STATUS, variables: { sessionId: session.id } } });
    }
    await waitUntil(() => executor.subscriberCount === ids.length, 5_000, 'four subscribers');
    expect(executor.groupCount).toBe(1);

    const turn = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, turn.id);
    const nexts = (s: RawSocket) => s.messages.filter((m) => m.type === 'next');
    await waitUntil(() => sockets.every((s) => nexts(s).length === 2), 5_000, 'two events at every socket');

    for (const [i, socket] of sockets.entries()) {
      expect(nexts(socket).map((m) => m.id)).toEqual([ids[i], ids[i]]);
      expect(nexts(socket).map((m) => (m.payload as { data: Status }).data.turnStatusChanged.status)).toEqual(['PENDING', 'COMPLETED']);
    }
  });
});

describe('a subscriber that stops reading', () => {
  const MAX_BUFFERED = 64 * 1024;
  let t: TestGateway;
  const clients: Client[] = [];
  const sockets: RawSocket[] = [];
  beforeAll(async () => {
    t = await startGateway({ env: { WS_MAX_BUFFERED_BYTES: String(MAX_BUFFERED) }, hooks: { sweeper: false } });
  });
  afterAll(async () => {
    sockets.forEach((s) => s.ws.terminate());
    await Promise.all(clients.map(async (c) => c.dispose()));
    await t.close();
  });

  it('is dropped with 4413 while the others keep receiving, and resumes with afterEventId without a gap or a duplicate', async () => {
    const { live } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    const { websockets, executor } = t.gateway.live;
    const session = await sessions.createSession(alice, { name: 'followed', agentContextId: 'ac' });
    const busy = await sessions.createSession(alice, { name: 'streams a lot', agentContextId: 'ac' });
    const streaming = await addTurn(sessions, alice, busy.id);
    const from = await live.history.latestId('acme');

    const fastClient = wsClient(t.url, tokenOf(t, alice));
    clients.push(fastClient);
    const fast = subscribe<Status>(fastClient, STATUS, { sessionId: session.id });
    // The slow one follows the same session and a turn that streams far more than it reads.
    const slow = new RawSocket(t.url);
    sockets.push(slow);
    await slow.send({ type: 'connection_init', payload: { authorization: `Bearer ${tokenOf(t, alice)}` } });
    await slow.waitForMessage('connection_ack');
    await slow.send({ id: 'status', type: 'subscribe', payload: { query: STATUS, variables: { sessionId: session.id } } });
    await slow.send({ id: 'text', type: 'subscribe', payload: { query: OUTPUT, variables: { sessionId: busy.id, turnId: streaming.id } } });
    await waitUntil(() => executor.subscriberCount === 3, 5_000, 'three subscribers');
    slow.ws.pause();

    const first = await addTurn(sessions, alice, session.id);
    await fast.waitFor(1);
    const chunk = 'x'.repeat(64 * 1024);
    for (let index = 0; websockets.slowConsumersDropped === 0; index++) {
      if (index > 2_000) throw new Error('128 MB streamed and the slow subscriber is still connected');
      t.gateway.output.append({ orgId: 'acme', sessionId: busy.id, turnId: streaming.id, index, textDelta: chunk });
      if (index % 8 === 7) await sleep(5);
    }
    // Its operations ended with it: the live groups hold only the fast subscriber now.
    await waitUntil(() => executor.subscriberCount === 1, 5_000, 'the slow subscriber to leave its groups');
    await completeTurn(sessions, alice, session.id, first.id);
    const second = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, second.id);
    await fast.waitFor(4);

    slow.ws.resume();
    expect((await slow.closed).code).toBe(GatewayCloseCode.SlowConsumer);
    const seen = slow.messages
      .filter((m) => m.id === 'status' && m.type === 'next')
      .map((m) => Number((m.payload as { data: Status }).data.turnStatusChanged.eventId));
    const resumedClient = wsClient(t.url, tokenOf(t, alice));
    clients.push(resumedClient);
    const resumed = subscribe<Status>(resumedClient, STATUS, { sessionId: session.id, after: String(seen.at(-1) ?? from) });
    await resumed.waitFor(4 - seen.length);
    await sleep(50);

    const stored = (await live.history.after({ orgId: 'acme', sessionId: session.id }, from, 100)).map((e) => e.eventId);
    expect(stored).toHaveLength(4);
    expect([...seen, ...resumed.data.map((d) => Number(d.turnStatusChanged.eventId))]).toEqual(stored);
    expect(fast.data.map((d) => Number(d.turnStatusChanged.eventId))).toEqual(stored);
    expect(websockets.slowConsumersDropped).toBe(1);
  }, 60_000);
});

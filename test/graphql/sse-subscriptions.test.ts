import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Client as WsClient } from 'graphql-ws';
import type { Client as SseClient } from 'graphql-sse';
import type { Caller } from '../../src/domain/caller';
import { FLOOD_WITH_VARIABLE } from '../support/client-queries';
import { admin, alice, bob, carol, startGateway, type TestGateway } from '../support/testkit';
import { eventsOf, rawStream, sseClient } from '../support/sse';
import { addTurn, completeTurn } from '../support/turns';
import { sleep, subscribe, waitUntil, wsClient } from '../support/ws';


const ACTIVITY = `subscription A($filter: AgentSessionFilter, $after: ID) {
  sessionActivity(filter: $filter, afterEventId: $after) { eventId sequenceNumber status session { id name } }
}`;
const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { eventId sequenceNumber status turn { id status } }
}`;
const OUTPUT = `subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { index textDelta } }`;
type Activity = { sessionActivity: { eventId: string; sequenceNumber: number; status: string; session: { id: string; name: string } } };
type Status = { turnStatusChanged: { eventId: string; sequenceNumber: number; status: string } };

let t: TestGateway;
const sseClients: SseClient[] = [];
const wsClients: WsClient[] = [];
const tokenOf = (c: Caller, ttl?: number) =>
  t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, ttl);
const sse = (c: Caller, token = tokenOf(c)) => {
  const client = sseClient(t.url, token);
  sseClients.push(client);
  return client;
};
const ws = (c: Caller) => {
  const client = wsClient(t.url, tokenOf(c));
  wsClients.push(client);
  return client;
};
const subscribers = () => t.gateway.live.executor.subscriberCount;
const sessions = () => t.gateway.sessions.lifecycle;
const codeOf = (result: { errors?: readonly { extensions?: Record<string, unknown> }[] } | undefined) => result?.errors?.[0]?.extensions?.code;

beforeAll(async () => {
  t = await startGateway({ env: { SSE_MAX_STREAMS_PER_USER: '3' }, hooks: { sweeper: false } });
});
afterEach(async () => {
  sseClients.splice(0).forEach((c) => c.dispose());
  await Promise.all(wsClients.splice(0).map(async (c) => c.dispose()));
  await waitUntil(() => subscribers() === 0 && t.gateway.live.sse.streams === 0, 5_000, 'streams to end');
});
afterAll(() => t.close());

describe('subscriptions over Server-Sent Events (graphql-sse)', () => {
  it('streams status changes as `next` events and completes turnOutput when its turn ends', async () => {
    const session = await sessions().createSession(alice, { name: 'over sse', agentContextId: 'ac' });
    const feed = subscribe<Status>(sse(alice), STATUS, { sessionId: session.id });
    await waitUntil(() => subscribers() === 1);
    const turn = await addTurn(sessions(), alice, session.id);
    const text = subscribe<{ turnOutput: { index: number; textDelta: string } }>(sse(alice), OUTPUT, { sessionId: session.id, turnId: turn.id });
    await waitUntil(() => subscribers() === 2);
    const ref = { orgId: 'acme', sessionId: session.id, turnId: turn.id };
    t.gateway.output.append({ ...ref, index: 0, textDelta: 'hello ' });
    t.gateway.output.append({ ...ref, index: 1, textDelta: 'world' });
    await text.waitFor(2);
    await completeTurn(sessions(), alice, session.id, turn.id);
    t.gateway.output.end(ref);
    await text.done;
    expect(text.data.map((d) => d.turnOutput.textDelta).join('')).toBe('hello world');
    const events = await feed.waitFor(2);
    expect(events.map((r) => r.data?.turnStatusChanged.status)).toEqual(['PENDING', 'COMPLETED']);
  });

  it('authorises every event: a user sees only the sessions it may read', async () => {
    const mine = await sessions().createSession(bob, { name: 'bob-visible', agentContextId: 'ac' });
    const hidden = await sessions().createSession(carol, { name: 'carol-private', agentContextId: 'ac' });
    const feed = subscribe<Activity>(sse(bob), ACTIVITY);
    await waitUntil(() => subscribers() === 1);
    await addTurn(sessions(), carol, hidden.id);
    await addTurn(sessions(), bob, mine.id);
    await feed.waitFor(1);
    await sleep(50);
    expect(feed.data.map((d) => d.sessionActivity.session.name)).toEqual(['bob-visible']);
  });

  it('shares one execution and one serialised payload per event between SSE and WebSocket subscribers', async () => {
    const { executor } = t.gateway.live;
    const session = await sessions().createSession(alice, { name: 'shared', agentContextId: 'ac', isPublic: true });
    const admins = [admin('boss-1'), admin('boss-2'), admin('boss-3')];
    const feeds = admins.flatMap((a) => [subscribe<Status>(sse(a), STATUS, { sessionId: session.id }), subscribe<Status>(ws(a), STATUS, { sessionId: session.id })]);
    await waitUntil(() => subscribers() === 6);
    expect(executor.groupCount).toBe(1);
    const before = { executions: executor.executions, serialisations: executor.serialisations };
    const turn = await addTurn(sessions(), alice, session.id);
    await completeTurn(sessions(), alice, session.id, turn.id);
    await Promise.all(feeds.map((f) => f.waitFor(2)));
    expect(executor.executions - before.executions).toBe(2);
    expect(executor.serialisations - before.serialisations).toBe(2);
    const seen = feeds.map((f) => f.data.map((d) => d.turnStatusChanged.eventId));
    expect(new Set(seen.map((ids) => ids.join())).size).toBe(1);
  });

  it('resumes after a dropped stream with afterEventId: nothing lost, nothing repeated', async () => {
    const session = await sessions().createSession(alice, { name: 'resume over sse', agentContextId: 'ac' });
    const filter = { search: 'resume over sse' };
    const first = sse(alice);
    const before = subscribe<Activity>(first, ACTIVITY, { filter });
    await waitUntil(() => subscribers() === 1);
    const t1 = await addTurn(sessions(), alice, session.id);
    await completeTurn(sessions(), alice, session.id, t1.id);
    const lastSeen = (await before.waitFor(2))[1]!.data!.sessionActivity.eventId;

    first.dispose();
    await waitUntil(() => subscribers() === 0 && t.gateway.live.sse.streams === 0, 5_000, 'the stream to drop');
    const t2 = await addTurn(sessions(), alice, session.id);
    await completeTurn(sessions(), alice, session.id, t2.id);

    const resumed = subscribe<Activity>(sse(alice), ACTIVITY, { filter, after: lastSeen });
    await resumed.waitFor(2);
    await addTurn(sessions(), alice, session.id);
    await resumed.waitFor(3);
    expect(resumed.data.map((d) => [d.sessionActivity.sequenceNumber, d.sessionActivity.status])).toEqual([
      [2, 'PENDING'],
      [2, 'COMPLETED'],
      [3, 'PENDING'],
    ]);
  });

  it('refuses operations with the same codes as over WebSocket: a `next` with the errors, then `complete`', async () => {
    const privateOfBob = await sessions().createSession(bob, { name: 'private', agentContextId: 'ac' });
    const token = tokenOf(alice);
    const cases: [string, unknown, string][] = [
      ['a session it may not read', { query: STATUS, variables: { sessionId: privateOfBob.id } }, 'NOT_FOUND'],
      ['a malformed event id', { query: STATUS, variables: { sessionId: privateOfBob.id, after: 'abc' } }, 'BAD_USER_INPUT'],
      ['an unknown field', { query: 'subscription { nope }' }, 'GRAPHQL_VALIDATION_FAILED'],
      ['an operation over the cost limit', { query: FLOOD_WITH_VARIABLE, variables: { id: privateOfBob.id, n: 100 } }, 'GRAPHQL_VALIDATION_FAILED'],
    ];
    for (const [what, body, code] of cases) {
      const res = await rawStream(t.url, { token, body });
      const events = eventsOf(res.text);
      expect({ what, status: res.status, type: res.contentType, events: events.map((e) => e.event), code: codeOf(events[0]?.data as never) }).toEqual({
        what,
        status: 200,
        type: 'text/event-stream; charset=utf-8',
        events: ['next', 'complete'],
        code,
      });
    }
    // GraphQL over HTTP: GET changes nothing.
    const mutation = await rawStream(t.url, { method: 'GET', token, query: { query: 'mutation { deleteAgentSession(id: "x") }' } });
    expect(codeOf(eventsOf(mutation.text)[0]?.data as never)).toBe('BAD_REQUEST');
    // Queries answer once over GET as well.
    const viewer = await rawStream(t.url, { method: 'GET', token, query: { query: '{ me { user { id } } }' } });
    expect(eventsOf(viewer.text)).toEqual([{ event: 'next', data: { data: { me: { user: { id: 'alice' } } } } }, { event: 'complete', data: null }]);
  });

  it('refuses a missing or expired token with 401, a wrong Accept with 406 and a user over its stream limit with 429', async () => {
    const unauthenticated = { errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }] };
    const none = await rawStream(t.url, { body: { query: ACTIVITY } });
    expect([none.status, JSON.parse(none.text)]).toEqual([401, unauthenticated]);
    const expired = await rawStream(t.url, { token: tokenOf(alice, -10), body: { query: ACTIVITY } });
    expect(expired.status).toBe(401);
    const json = await rawStream(t.url, { token: tokenOf(alice), accept: 'application/json', body: { query: ACTIVITY } });
    expect(json.status).toBe(406);
    const put = await rawStream(t.url, { method: 'PUT', token: tokenOf(alice) });
    expect(put.status).toBe(405);
    // The pipeline's one body parser and error presenter answer as on POST /graphql.
    const notJson = await rawStream(t.url, { token: tokenOf(alice), body: '{not json' });
    expect([notJson.status, codeOf(JSON.parse(notJson.text) as never)]).toEqual([400, 'BAD_USER_INPUT']);
    const noQuery = await rawStream(t.url, { token: tokenOf(alice), body: { variables: {} } });
    expect([noQuery.status, codeOf(JSON.parse(noQuery.text) as never)]).toEqual([400, 'BAD_REQUEST']);
    const text = await fetch(`${t.url}/graphql/stream`, {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'text/plain', authorization: `Bearer ${tokenOf(alice)}` },
      body: ACTIVITY,
    });
    expect(text.status).toBe(415);

    const held = [1, 2, 3].map(() => subscribe<Activity>(sse(carol), ACTIVITY));
    await waitUntil(() => subscribers() === 3);
    const fourth = await rawStream(t.url, { token: tokenOf(carol), body: { query: ACTIVITY } });
    expect([fourth.status, codeOf(JSON.parse(fourth.text) as never)]).toEqual([429, 'TOO_MANY_SUBSCRIPTIONS']);
    // Another user is not affected.
    const other = subscribe<Activity>(sse(bob), ACTIVITY);
    await waitUntil(() => subscribers() === 4);
    expect(held.length + 1).toBe(subscribers());
    other.unsubscribe();
  });

  it('ends the stream when the token expires; subscribing again with it is refused', async () => {
    const session = await sessions().createSession(alice, { name: 'short token', agentContextId: 'ac' });
    const token = tokenOf(alice, 1);
    const feed = subscribe<Status>(sse(alice, token), STATUS, { sessionId: session.id, after: '0' });
    await waitUntil(() => subscribers() === 1);
    await expect(feed.done).rejects.toBeDefined();
    expect(subscribers()).toBe(0);
    const again = await rawStream(t.url, { token, body: { query: STATUS, variables: { sessionId: session.id } } });
    expect(again.status).toBe(401);
  });

  it('ends a stream that does not read (WS_MAX_BUFFERED_BYTES) without holding up the group', async () => {
    const { sse: streams, executor } = t.gateway.live;
    const busy = await sessions().createSession(alice, { name: 'streams a lot', agentContextId: 'ac' });
    const turn = await addTurn(sessions(), alice, busy.id);
    const body = JSON.stringify({ query: OUTPUT, variables: { sessionId: busy.id, turnId: turn.id } });
    // A reader that stops reading once the stream is open.
    const slow = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(
        `${t.url}/graphql/stream`,
        { method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${tokenOf(alice)}` } },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    });
    slow.pause();
    const ended = new Promise<void>((resolve) => {
      slow.once('close', resolve);
      slow.once('error', () => resolve());
    });
    const fast = subscribe<{ turnOutput: { index: number } }>(sse(alice), OUTPUT, { sessionId: busy.id, turnId: turn.id });
    await waitUntil(() => executor.subscriberCount === 2, 5_000, 'both readers');
    const before = streams.slowConsumersDropped;
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    for (; streams.slowConsumersDropped === before; sent++) {
      if (sent > 2_000) throw new Error('128 MB streamed and the slow reader is still connected');
      t.gateway.output.append({ orgId: 'acme', sessionId: busy.id, turnId: turn.id, index: sent, textDelta: chunk });
      if (sent % 8 === 7) await sleep(5);
    }
    await waitUntil(() => executor.subscriberCount === 1, 5_000, 'the slow reader to leave its group');
    slow.resume();
    await ended;
    // The one that reads got everything.
    await fast.waitFor(sent, 20_000);
    expect(fast.data.map((d) => d.turnOutput.index)).toEqual(Array.from({ length: sent }, (_, i) => i));
    fast.unsubscribe();
  }, 60_000);
});

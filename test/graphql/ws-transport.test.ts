import jwt from 'jsonwebtoken';
import WebSocket from 'ws';
import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { addTurn } from '../support/turns';
import { RawSocket, sleep, subscribe, waitUntil, wsClient } from '../support/ws';
import { admin, alice, bob, startGateway, TEST_SECRET, type TestGateway } from '../support/testkit';

const tokenFor = (t: TestGateway, c: Caller, ttl?: number) =>
  t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, ttl);

const STATUS = `subscription S($sessionId: ID!, $after: ID) {
  turnStatusChanged(sessionId: $sessionId, afterEventId: $after) { eventId status turn { id status } session { id name turnCount } }
}`;

describe('the graphql-transport-ws protocol', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ env: { WS_CONNECTION_INIT_TIMEOUT_MS: '300', WS_KEEPALIVE_MS: '100' } });
  });
  afterAll(() => t.close());

  const init = (token: string | null) => ({ type: 'connection_init', payload: token === null ? {} : { authorization: `Bearer ${token}` } });
  const opened: RawSocket[] = [];
  const raw = (protocol?: string | null, path?: string) => {
    const socket = new RawSocket(t.url, protocol, path);
    opened.push(socket);
    return socket;
  };
  afterEach(() => opened.splice(0).forEach((s) => s.ws.terminate()));

  it('acknowledges a valid token', async () => {
    const socket = raw();
    await socket.send(init(tokenFor(t, alice)));
    await socket.waitForMessage('connection_ack');
  });

  it.each([
    ['Authorization', (token: string) => ({ Authorization: `Bearer ${token}` })],
    ['AUTHORIZATION', (token: string) => ({ AUTHORIZATION: `Bearer ${token}` })],
    ['headers.authorization', (token: string) => ({ headers: { authorization: `Bearer ${token}` } })],
    ['headers.Authorization', (token: string) => ({ headers: { Authorization: `Bearer ${token}` } })],
  ])('acknowledges the token spelled as %s in connection_init', async (_spelling, payload) => {
    const socket = raw();
    await socket.send({ type: 'connection_init', payload: payload(tokenFor(t, alice)) });
    await socket.waitForMessage('connection_ack');
  });

  it.each([
    ['Authorization', (token: string) => ({ Authorization: `Bearer ${token}` })],
    ['headers.authorization', (token: string) => ({ headers: { authorization: `Bearer ${token}` } })],
    ['two spellings with different tokens', (token: string) => ({ authorization: `Bearer ${tokenFor(t, alice)}`, Authorization: `Bearer ${token}` })],
  ])('closes with 4403 for a wrong token spelled as %s', async (_spelling, payload) => {
    const socket = raw();
    await socket.send({ type: 'connection_init', payload: payload(jwt.sign({ sub: 'alice', org: 'acme' }, 'other-secret', { expiresIn: 60 })) });
    expect((await socket.closed).code).toBe(4403);
    expect(socket.messages).toEqual([]);
  });

  it.each([
    ['no token', () => init(null)],
    ['a token that is not a JWT', () => init('not-a-jwt')],
    ['a token signed with another secret', () => init(jwt.sign({ sub: 'alice', org: 'acme' }, 'other-secret', { expiresIn: 60 }))],
    ['an expired token', () => init(jwt.sign({ sub: 'alice', org: 'acme', exp: Math.floor(Date.now() / 1000) - 5 }, TEST_SECRET))],
    ['a token without the Bearer scheme', () => ({ type: 'connection_init', payload: { authorization: tokenFor(t, alice) } })],
  ])('closes with 4403 for %s', async (_what, message) => {
    const socket = raw();
    await socket.send(message());
    expect((await socket.closed).code).toBe(4403);
    expect(socket.messages).toEqual([]);
  });

  it('closes with 4403 when the token expires, not before', async () => {
    const socket = raw();
    const started = Date.now();
    await socket.send(init(tokenFor(t, alice, 2)));
    await socket.waitForMessage('connection_ack');
    const { code } = await socket.closed;
    expect(code).toBe(4403);
    // exp has one-second resolution: the token was valid for 1-2 s after it was issued.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('pings to keep the connection alive', async () => {
    const socket = raw();
    let pings = 0;
    socket.ws.on('ping', () => pings++);
    await socket.send(init(tokenFor(t, alice)));
    await socket.waitForMessage('connection_ack');
    await waitUntil(() => pings >= 2, 2_000, 'two pings');
  });

  it('drops a peer that does not answer pings', async () => {
    const silent = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { autoPong: false });
    let pings = 0;
    silent.on('ping', () => pings++);
    silent.once('open', () => silent.send(JSON.stringify(init(tokenFor(t, alice)))));
    const closed = await new Promise<number>((resolve) => silent.once('close', resolve));
    // Terminated, without a close frame: the socket is presumed dead.
    expect(closed).toBe(1006);
    expect(pings).toBeGreaterThanOrEqual(1);
  });

  it('closes with 4400 on a message that is not a protocol message', async () => {
    const socket = raw();
    await socket.send('{not json');
    expect((await socket.closed).code).toBe(4400);
  });

  it('closes with 4400 on a message only a server sends', async () => {
    const socket = raw();
    await socket.send(init(tokenFor(t, alice)));
    await socket.waitForMessage('connection_ack');
    await socket.send({ id: '1', type: 'next', payload: { data: {} } });
    expect((await socket.closed).code).toBe(4400);
  });

  it('closes with 4401 on a subscribe before the connection is acknowledged', async () => {
    const socket = raw();
    await socket.send({ id: '1', type: 'subscribe', payload: { query: '{ me { roles } }' } });
    expect((await socket.closed).code).toBe(4401);
  });

  it('closes with 4408 when connection_init does not come in time', async () => {
    const socket = raw();
    const started = Date.now();
    expect((await socket.closed).code).toBe(4408);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('closes with 4409 when an operation id is reused while it runs', async () => {
    const session = await t.gateway.sessions.lifecycle.createSession(alice, { name: 'dup', agentContextId: 'ac' });
    const socket = raw();
    await socket.send(init(tokenFor(t, alice)));
    await socket.waitForMessage('connection_ack');
    const message = { id: 'same', type: 'subscribe', payload: { query: STATUS, variables: { sessionId: session.id } } };
    await socket.send(message);
    await socket.send(message);
    expect((await socket.closed).code).toBe(4409);
  });

  it('closes with 4429 on a second connection_init', async () => {
    const socket = raw();
    await socket.send(init(tokenFor(t, alice)));
    await socket.waitForMessage('connection_ack');
    await socket.send(init(tokenFor(t, alice)));
    expect((await socket.closed).code).toBe(4429);
  });

  it('closes with 4406 when the client does not speak graphql-transport-ws', async () => {
    const socket = raw(null);
    expect((await socket.closed).code).toBe(4406);
  });

  it('upgrades only /graphql', async () => {
    const socket = raw(undefined, '/elsewhere');
    const error = await new Promise<Error>((resolve) => socket.ws.once('error', resolve));
    expect(error.message).toMatch(/404/);
  });
});

describe('operations over WebSocket', () => {
  let t: TestGateway;
  const clients: Client[] = [];
  beforeAll(async () => {
    t = await startGateway();
  });
  afterEach(() => Promise.all(clients.splice(0).map(async (c) => c.dispose())));
  afterAll(() => t.close());
  const connect = (t: TestGateway, c: Caller) => {
    const client = wsClient(t.url, tokenFor(t, c));
    clients.push(client);
    return client;
  };
  const nested = (depth: number): string => (depth === 0 ? 'id' : `lastTurn { session { ${nested(depth - 1)} } }`);

  it('answers queries, with the same abuse limits as HTTP', async () => {
    const client = connect(t, alice);
    const me = subscribe<{ me: { user: { id: string } } }>(client, '{ me { user { id } } }');
    await me.done;
    expect(me.data).toEqual([{ me: { user: { id: 'alice' } } }]);

    const deep = subscribe(client, `{ agentSessions { edges { node { ${nested(6)} } } } }`);
    await expect(deep.done).rejects.toEqual([expect.objectContaining({ message: expect.stringMatching(/depth/i), extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) })]);
    const wide = subscribe(client, `{ ${Array.from({ length: 2100 }, () => '__typename').join(' ')} }`);
    await expect(wide.done).rejects.toEqual([expect.objectContaining({ message: expect.stringMatching(/token/i) })]);
    const aliases = subscribe(client, `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: me { roles }`).join(' ')} }`);
    await expect(aliases.done).rejects.toEqual([expect.objectContaining({ message: expect.stringMatching(/aliases/i) })]);
    const deepSubscription = subscribe(client, `subscription { turnStatusChanged(sessionId: "x") { turn { session { ${nested(6)} } } } }`);
    await expect(deepSubscription.done).rejects.toEqual([expect.objectContaining({ message: expect.stringMatching(/depth/i) })]);
  });

  it('hides introspection and field suggestions in production', async () => {
    const prod = await startGateway({ env: { NODE_ENV: 'production' } });
    try {
      const client = connect(prod, alice);
      const introspection = subscribe(client, '{ __schema { types { name } } }');
      await expect(introspection.done).rejects.toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.stringMatching(/introspection/i) })]));
      const typo = subscribe(client, 'subscription { turnStatusChange(sessionId: "x") { eventId } }');
      const errors = (await typo.done.catch((e: unknown) => e)) as { message: string }[];
      expect(errors[0]?.message).not.toMatch(/Did you mean/);
      await client.dispose();
    } finally {
      await prod.close();
    }
  });

  it('reports the subscriptions check in /readyz', async () => {
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { database: 'ok', blobs: 'ok', subscriptions: 'ok' } });
  });
});

describe('fan-out', () => {
  const admins = [admin('boss-1'), admin('boss-2'), admin('boss-3')];

  async function fanOut(env: Record<string, string>) {
    const t = await startGateway({ env });
    const clients: Client[] = [];
    try {
      const { live } = t.gateway.services;
      const sessions = t.gateway.sessions.lifecycle;
      const session = await sessions.createSession(alice, { name: 'watched', agentContextId: 'ac', isPublic: true });
      const after = String(await live.history.latestId('acme'));
      const connect = (c: Caller) => {
        const client = wsClient(t.url, tokenFor(t, c));
        clients.push(client);
        return client;
      };
      const subs = [
        // Three admins, alice and bob: the same operation, whose results are the same for every reader (issue 35.8).
        ...admins.map((a) => subscribe(connect(a), STATUS, { sessionId: session.id })),
        // Resuming from different points changes the replay, not the live results.
        subscribe(connect(admins[0]!), STATUS, { sessionId: session.id, after }),
        // alice twice, bob once: each still admitted per event (they may read the session).
        subscribe(connect(alice), STATUS, { sessionId: session.id }),
        subscribe(connect(alice), STATUS, { sessionId: session.id, after }),
        subscribe(connect(bob), STATUS, { sessionId: session.id }),
      ];
      await waitUntil(() => t.gateway.live.executor.subscriberCount === subs.length);
      const groups = t.gateway.live.executor.groupCount;
      const before = { executions: t.gateway.live.executor.executions, serialisations: t.gateway.live.executor.serialisations };
      t.statements.length = 0;
      await addTurn(sessions, alice, session.id);
      await Promise.all(subs.map((s) => s.waitFor(1)));
      await sleep(50);
      const executions = t.gateway.live.executor.executions - before.executions;
      const serialisations = t.gateway.live.executor.serialisations - before.serialisations;
      const sessionReads = t.statements.filter((sql) => /FROM "agent_sessions"/.test(sql) && !/FOR UPDATE|UPDATE "agent_sessions"/.test(sql)).length;
      const payloads = subs.map((s) => JSON.stringify(s.results));
      return { groups, executions, serialisations, sessionReads, payloads };
    } finally {
      await Promise.all(clients.map(async (c) => c.dispose()));
      await t.close();
    }
  }

  it('executes each event once per operation, whoever subscribed, and sends the same result to each subscriber', async () => {
    const shared = await fanOut({});
    expect(shared.groups).toBe(1);
    expect(shared.executions).toBe(1);
    expect(shared.serialisations).toBe(1);
    expect(new Set(shared.payloads).size).toBe(1);

    const perSubscriber = await fanOut({ WS_SHARED_EXECUTION: 'false' });
    expect(perSubscriber.groups).toBe(7);
    expect(perSubscriber.executions).toBe(7);
    expect(perSubscriber.serialisations).toBe(7);
    expect(perSubscriber.sessionReads).toBeGreaterThan(shared.sessionReads);
    expect(new Set(perSubscriber.payloads).size).toBe(1);
  });
});

describe('graceful shutdown', () => {
  it('closes WebSockets with 1012 (service restart), refuses new ones, and runs the shutdown hooks', async () => {
    const t = await startGateway();
    const session = await t.gateway.sessions.lifecycle.createSession(alice, { name: 'bye', agentContextId: 'ac' });
    const codes: number[] = [];
    const client = wsClient(t.url, tokenFor(t, alice), { onClosed: (code) => codes.push(code) });
    const sub = subscribe(client, STATUS, { sessionId: session.id });
    await waitUntil(() => t.gateway.live.executor.subscriberCount === 1);
    const ran: string[] = [];
    t.gateway.onShutdown('release leases', async () => {
      ran.push('release leases');
    });
    const closing = t.gateway.close();
    const late = new RawSocket(t.url);
    await expect(new Promise((_, reject) => late.ws.once('error', reject))).rejects.toThrow(/503|ECONNREFUSED/);
    await expect(sub.done).rejects.toMatchObject({ code: 1012 });
    await closing;
    expect(codes).toEqual([1012]);
    expect(ran).toEqual(['release leases']);
    await client.dispose();
    await t.close();
  });
});

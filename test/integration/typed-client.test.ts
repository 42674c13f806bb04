import WebSocket from 'ws';
import {
  createGatewayClient,
  GatewayError,
  SessionActivityDocument,
  SessionListDocument,
  TurnOutputDocument,
  TurnStatusChangedDocument,
  ViewerDocument,
  type ConnectionStatus,
  type GatewayClient,
  type SessionActivitySubscription,
  type TurnStatusChangedSubscription,
} from '../../packages/client/src';
import type { Caller } from '../../src/domain/caller';
import type { SessionStore } from '../../src/sessions/session-store';
import { describeWithMysql, describeWithRedis } from '../support/services';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { addTurn, completeTurn, failTurn } from '../support/turns';
import { waitUntil } from '../support/ws';
import { alice, bob, boss, startGateway, type GatewayOptions, type TestGateway } from '../support/testkit';

/** What a caller of the client saw, in the order it saw it. */
class Seen<T> {
  readonly items: T[] = [];
  completed = false;
  error: GatewayError | null = null;
  readonly observer = {
    next: (data: T) => void this.items.push(data),
    complete: () => void (this.completed = true),
    error: (e: GatewayError) => void (this.error = e),
  };
}

function clientSuite(options: () => GatewayOptions, transport: 'ws' | 'sse'): void {
  let t: TestGateway;
  let proxy: TcpProxy;
  const clients: GatewayClient[] = [];
  const statuses: ConnectionStatus[] = [];
  const lastStatus = new Map<GatewayClient, ConnectionStatus>();
  const tokenOf = (c: Caller, ttl?: number) =>
    t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, ttl);
  /** A client that reaches the gateway only through the proxy the test cuts. */
  const connect = (c: Caller, token = tokenOf(c)) => {
    const client = createGatewayClient({
      url: `http://127.0.0.1:${proxy.port}/graphql`,
      token,
      transport,
      webSocketImpl: WebSocket,
      retry: { initialDelayMs: 20, maxDelayMs: 300 },
    });
    client.onStatus((s) => {
      statuses.push(s);
      lastStatus.set(client, s);
    });
    clients.push(client);
    return client;
  };
  const subscribers = () => t.gateway.live.executor.subscriberCount;
  let sessions: SessionStore['lifecycle'];
  /** Cuts every connection through the proxy, lets `meanwhile` happen, then lets clients back in. */
  const outage = async (meanwhile: () => Promise<void>) => {
    // The server counts a subscriber before its client has seen the stream open (SSE headers):
    // cut only once every client says it is connected, so each cut is a disconnect it reports.
    await waitUntil(() => clients.every((c) => lastStatus.get(c) === 'connected'), 10_000, 'every client to report connected');
    const before = subscribers();
    proxy.cut();
    await waitUntil(() => subscribers() < before, 10_000, 'the server to notice the dropped sockets');
    await meanwhile();
    proxy.restore();
  };

  beforeAll(async () => {
    t = await startGateway(options());
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(t.url).port));
    sessions = t.gateway.sessions.lifecycle;
  });
  afterEach(async () => {
    proxy.restore();
    await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
    await waitUntil(() => subscribers() === 0, 10_000, 'subscribers to leave');
    statuses.length = 0;
    lastStatus.clear();
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  it('gives typed queries over HTTP and a coded error for a refused token', async () => {
    const client = connect(alice);
    const viewer = await client.query(ViewerDocument);
    expect(viewer.me).toEqual({ user: { id: 'alice', text: 'Name of alice' }, organization: { id: 'acme', text: 'Org acme' }, roles: [] });
    const session = await sessions.createSession(alice, { name: 'typed list', agentContextId: 'ac' });
    const page = await client.query(SessionListDocument, { first: 5, filter: { search: 'typed list' } });
    expect(page.agentSessions.totalCount).toBe(1);
    expect(page.agentSessions.edges[0]?.node).toMatchObject({ id: session.id, name: 'typed list', ownerUser: { id: 'alice' }, turnCount: 0 });

    const refused = await connect(alice, 'not-a-token').query(ViewerDocument).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    const bad = await client.query(SessionListDocument, { first: 101 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('onStatus says connected while any of several subscriptions is open, disconnected once none is', async () => {
    const one = await sessions.createSession(alice, { name: 'status one', agentContextId: 'ac' });
    const two = await sessions.createSession(alice, { name: 'status two', agentContextId: 'ac' });
    const client = connect(alice);
    const stopOne = client.subscribe(TurnStatusChangedDocument, { sessionId: one.id }, new Seen<TurnStatusChangedSubscription>().observer);
    await waitUntil(() => subscribers() === 1 && lastStatus.get(client) === 'connected', 10_000, 'the first subscription');
    const stopTwo = client.subscribe(TurnStatusChangedDocument, { sessionId: two.id }, new Seen<TurnStatusChangedSubscription>().observer);
    await waitUntil(() => subscribers() === 2, 10_000, 'the second subscription');
    // A second stream opening must not leave the client saying it is still connecting.
    await waitUntil(() => lastStatus.get(client) === 'connected', 10_000, 'connected with two subscriptions');
    stopOne();
    await waitUntil(() => subscribers() === 1, 10_000, 'one subscription left');
    expect(lastStatus.get(client)).toBe('connected');
    stopTwo();
    await waitUntil(() => lastStatus.get(client) === 'disconnected', 10_000, 'disconnected with none left');
  });

  it('resumes status feeds across several dropped connections: every event once, in order', async () => {
    const mine = await sessions.createSession(alice, { name: 'resume me', agentContextId: 'ac' });
    const other = await sessions.createSession(bob, { name: 'elsewhere', agentContextId: 'ac' });
    const { history } = t.gateway.services.live;
    const start = await history.latestId('acme');
    const org = new Seen<SessionActivitySubscription>();
    const session = new Seen<TurnStatusChangedSubscription>();
    // No afterEventId: the client pins the newest id itself, so even a drop before the first event loses nothing.
    connect(boss).subscribe(SessionActivityDocument, {}, org.observer);
    connect(alice).subscribe(TurnStatusChangedDocument, { sessionId: mine.id }, session.observer);
    await waitUntil(() => subscribers() === 2, 10_000, 'both subscriptions');

    // A drop before any event arrived.
    await outage(async () => {
      const first = await addTurn(sessions, alice, mine.id, 'made while nobody was connected');
      await completeTurn(sessions, alice, mine.id, first.id);
    });
    for (let round = 1; round <= 4; round++) {
      const pending = await addTurn(sessions, alice, mine.id, `round ${round}`);
      const bobs = await addTurn(sessions, bob, other.id, `bob ${round}`);
      // Mid-stream: the client has seen some of this round, and the rest happens while it is away.
      await waitUntil(() => session.items.some((e) => e.turnStatusChanged.turn.id === pending.id), 10_000, `round ${round} to arrive`);
      // Both are back from the last outage, so this one drops both.
      await waitUntil(() => subscribers() === 2, 10_000, 'both subscriptions to be back');
      await outage(async () => {
        if (round % 2) await completeTurn(sessions, alice, mine.id, pending.id, `answer ${round}`);
        else await failTurn(sessions, alice, mine.id, pending.id);
        await completeTurn(sessions, bob, other.id, bobs.id);
      });
    }
    const last = await addTurn(sessions, alice, mine.id, 'after the last outage');

    const expectedOrg = (await history.after({ orgId: 'acme' }, start, 1000)).map((e) => String(e.eventId));
    await waitUntil(() => org.items.length >= expectedOrg.length, 15_000, 'the org feed to catch up');
    await waitUntil(() => session.items.some((e) => e.turnStatusChanged.turn.id === last.id), 15_000, 'the session feed to catch up');

    expect(expectedOrg).toHaveLength(2 + 4 * 4 + 1);
    expect(org.items.map((e) => e.sessionActivity.eventId)).toEqual(expectedOrg);
    const sessionIds = (await history.after({ orgId: 'acme', sessionId: mine.id }, start, 1000)).map((e) => String(e.eventId));
    expect(session.items.map((e) => e.turnStatusChanged.eventId)).toEqual(sessionIds);
    expect(session.items.map((e) => `${e.turnStatusChanged.turn.instructionSummary}`).slice(0, 3)).toEqual([
      'made while nobody was connected',
      'made while nobody was connected',
      'round 1',
    ]);
    // Each outage really dropped both sockets and each came back.
    expect(statuses.filter((s) => s === 'disconnected').length).toBeGreaterThanOrEqual(2 * 5);
    expect(statuses.filter((s) => s === 'connected').length).toBeGreaterThanOrEqual(2 * 6);
    expect([org.error, session.error]).toEqual([null, null]);
  });

  it('resumes streamed text by index: none repeated, none lost, then completes', async () => {
    const session = await sessions.createSession(alice, { name: 'streaming', agentContextId: 'ac' });
    const turn = await addTurn(sessions, alice, session.id, 'stream please');
    const ref = { orgId: 'acme', sessionId: session.id, turnId: turn.id };
    const pieces = Array.from({ length: 12 }, (_, i) => `piece ${i}; `);
    let next = 0;
    const emit = (n: number) => {
      for (const end = next + n; next < end; next++) t.gateway.output.append({ ...ref, index: next, textDelta: pieces[next]! });
    };
    const text = new Seen<{ turnOutput: { index: number; textDelta: string } }>();
    connect(alice).subscribe(TurnOutputDocument, { sessionId: session.id, turnId: turn.id }, text.observer);
    await waitUntil(() => subscribers() === 1, 10_000, 'the output subscription');
    for (let round = 0; round < 3; round++) {
      emit(2);
      await waitUntil(() => text.items.length === next, 10_000, 'the text so far');
      // Text produced while disconnected is read back from the kept copy after the reconnect.
      await outage(async () => emit(2));
      await waitUntil(() => subscribers() === 1, 10_000, 'the output subscription to come back');
    }
    await waitUntil(() => text.items.length === next, 10_000, 'the text so far');
    await completeTurn(sessions, alice, session.id, turn.id, 'done');
    t.gateway.output.end(ref);
    await waitUntil(() => text.completed, 10_000, 'the stream to complete');
    expect(text.items.map((d) => d.turnOutput.index)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(text.items.map((d) => d.turnOutput.textDelta).join('')).toBe(pieces.join(''));
    expect(text.error).toBeNull();
  });

  it('ends a subscription for good when the server refuses it or the token has expired', async () => {
    const privateOfBob = await sessions.createSession(bob, { name: 'private', agentContextId: 'ac' });
    const refused = new Seen<TurnStatusChangedSubscription>();
    connect(alice).subscribe(TurnStatusChangedDocument, { sessionId: privateOfBob.id, afterEventId: '0' }, refused.observer);
    await waitUntil(() => refused.error !== null, 10_000, 'the refusal');
    expect(refused.error?.code).toBe('NOT_FOUND');

    const expiring = new Seen<TurnStatusChangedSubscription>();
    const mine = await sessions.createSession(alice, { name: 'short token', agentContextId: 'ac' });
    connect(alice, tokenOf(alice, 1)).subscribe(TurnStatusChangedDocument, { sessionId: mine.id, afterEventId: '0' }, expiring.observer);
    await waitUntil(() => expiring.error !== null, 10_000, 'the expiry');
    expect(expiring.error?.code).toBe('UNAUTHENTICATED');
    expect(expiring.completed).toBe(false);
  });
}

describe.each(['ws', 'sse'] as const)('typed client over %s', (transport) => {
  describe('against an embedded gateway (SQLite, in-process bus)', () => clientSuite(() => ({}), transport));

  describeWithRedis('against a gateway on MySQL and Redis', () => {
    describeWithMysql('(both servers)', () => clientSuite(() => ({ database: 'mysql', bus: 'redis' }), transport));
  });
});

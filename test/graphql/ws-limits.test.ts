import type { Caller } from '../../src/domain/caller';
import { GatewayCloseCode, MAX_TOKEN_BYTES } from '../../src/server/ws-limits';
import { RawSocket, waitUntil } from '../support/ws';
import { alice, bob, startGateway, type TestGateway } from '../support/testkit';

const STATUS = 'subscription S($id: ID!) { turnStatusChanged(sessionId: $id) { eventId status } }';

describe('WebSocket limits (defaults)', () => {
  let t: TestGateway;
  let sessionId: string;
  const opened: RawSocket[] = [];
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
    sessionId = (await t.gateway.sessions.lifecycle.createSession(alice, { name: 'watched', agentContextId: 'ac' })).id;
  });
  afterEach(async () => {
    opened.splice(0).forEach((s) => s.ws.terminate());
    await waitUntil(() => t.gateway.live.websockets.connections === 0, 5_000, 'sockets to close');
  });
  afterAll(() => t.close());

  const tokenOf = (c: Caller) => t.token({ userId: c.userId, orgId: c.orgId });
  const socket = () => {
    const s = new RawSocket(t.url);
    opened.push(s);
    return s;
  };
  const connected = async (c: Caller) => {
    const s = socket();
    await s.send({ type: 'connection_init', payload: { authorization: `Bearer ${tokenOf(c)}` } });
    await s.waitForMessage('connection_ack');
    return s;
  };
  const errorsFor = (s: RawSocket) => s.messages.filter((m) => m.type === 'error');

  it('runs 100 operations on one socket and answers each one more with TOO_MANY_SUBSCRIPTIONS, keeping the socket open', async () => {
    const s = await connected(alice);
    for (let i = 0; i < 500; i++) await s.send({ id: `s${i}`, type: 'subscribe', payload: { query: STATUS, variables: { id: sessionId } } });
    await waitUntil(() => errorsFor(s).length === 400, 10_000, '400 refusals');
    await waitUntil(() => t.gateway.live.executor.subscriberCount === 100, 10_000, '100 subscribers');
    const refused = errorsFor(s);
    expect(new Set(refused.map((m) => m.id)).size).toBe(400);
    expect(refused[0]?.payload).toEqual([
      { message: 'At most 100 operations may run at once on one connection; complete one first', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 100 } },
    ]);
    expect(s.ws.readyState).toBe(s.ws.OPEN);

    // Completing one makes room for another.
    const running = Array.from({ length: 500 }, (_, i) => `s${i}`).find((id) => !refused.some((m) => m.id === id)) as string;
    await s.send({ id: running, type: 'complete' });
    await waitUntil(() => t.gateway.live.executor.subscriberCount === 99, 5_000, 'one subscriber to leave');
    await s.send({ id: 'again', type: 'subscribe', payload: { query: STATUS, variables: { id: sessionId } } });
    await waitUntil(() => t.gateway.live.executor.subscriberCount === 100, 5_000, 'the new subscriber');
    expect(errorsFor(s).some((m) => m.id === 'again')).toBe(false);
  });

  it('lets one user hold 20 sockets, closes the 21st with 4429, and leaves other users alone', async () => {
    const sockets = [];
    for (let i = 0; i < 20; i++) sockets.push(await connected(alice));
    const extra = socket();
    await extra.send({ type: 'connection_init', payload: { authorization: `Bearer ${tokenOf(alice)}` } });
    const closed = await extra.closed;
    expect(closed).toEqual({ code: GatewayCloseCode.TooManyRequests, reason: 'Too many connections: at most 20 per user' });
    expect(closed.code).toBe(4429);
    expect(extra.messages).toEqual([]);
    await connected(bob);
    // A socket closed makes room again.
    sockets[0]?.ws.close();
    await waitUntil(() => t.gateway.live.websockets.connections === 20, 5_000, 'the socket to close');
    await connected(alice);
  });

  it('closes with 1009 on a message larger than 64 KiB', async () => {
    const s = await connected(alice);
    await s.send({ id: 'big', type: 'subscribe', payload: { query: `{ agentSession(id: "${'x'.repeat(70_000)}") { id } }` } });
    expect((await s.closed).code).toBe(GatewayCloseCode.MessageTooBig);
  });

  it('closes with 4431 on a token longer than an HTTP header may be', async () => {
    const huge = socket();
    await huge.send({ type: 'connection_init', payload: { authorization: `Bearer ${'a'.repeat(MAX_TOKEN_BYTES)}` } });
    expect((await huge.closed).code).toBe(4431);
    // Just under the bound it is an ordinary bad token.
    const bad = socket();
    await bad.send({ type: 'connection_init', payload: { authorization: `Bearer ${'a'.repeat(MAX_TOKEN_BYTES - 'Bearer '.length)}` } });
    expect((await bad.closed).code).toBe(4403);
  });

  it('keeps the parsed-document cache within its byte bound under 520 distinct 60 KB documents', async () => {
    const s = await connected(alice);
    const literal = 'x'.repeat(60_000);
    for (let batch = 0; batch < 26; batch++) {
      for (let i = 0; i < 20; i++) {
        const n = batch * 20 + i;
        // The 60 KB ride in a comment: an ID that long no longer validates (ids are at most 64 characters).
        await s.send({ id: `q${n}`, type: 'subscribe', payload: { query: `{ agentSession(id: "x${n}") { id } } # ${literal}` } });
      }
      await waitUntil(() => s.messages.filter((m) => m.type === 'complete' || m.type === 'error').length === (batch + 1) * 20, 10_000, 'the batch');
    }
    expect(errorsFor(s)).toEqual([]);
    const bytes = t.gateway.live.operations.documentCacheBytes;
    expect(bytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
  }, 60_000);
});

describe('WebSocket limits (configured)', () => {
  let t: TestGateway;
  const opened: RawSocket[] = [];
  beforeAll(async () => {
    t = await startGateway({
      env: { WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '2', WS_MAX_CONNECTIONS_PER_USER: '1', WS_MAX_PAYLOAD_BYTES: '2048' },
      hooks: { sweeper: false },
    });
  });
  afterAll(async () => {
    opened.forEach((s) => s.ws.terminate());
    await t.close();
  });
  const socket = () => {
    const s = new RawSocket(t.url);
    opened.push(s);
    return s;
  };
  const init = (s: RawSocket) => s.send({ type: 'connection_init', payload: { authorization: `Bearer ${t.token({ userId: 'alice' })}` } });

  it('follows WS_MAX_SUBSCRIPTIONS_PER_CONNECTION, WS_MAX_CONNECTIONS_PER_USER and WS_MAX_PAYLOAD_BYTES', async () => {
    const session = await t.gateway.sessions.lifecycle.createSession(alice, { name: 'watched', agentContextId: 'ac' });
    const first = socket();
    await init(first);
    await first.waitForMessage('connection_ack');
    for (const id of ['a', 'b', 'c']) await first.send({ id, type: 'subscribe', payload: { query: STATUS, variables: { id: session.id } } });
    const refused = await first.waitForMessage('error');
    expect(refused).toMatchObject({ id: 'c', payload: [{ extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', limit: 2 } }] });

    const second = socket();
    await init(second);
    expect((await second.closed).code).toBe(4429);

    await first.send({ id: 'd', type: 'subscribe', payload: { query: `{ agentSession(id: "${'x'.repeat(2100)}") { id } }` } });
    expect((await first.closed).code).toBe(1009);
  });
});

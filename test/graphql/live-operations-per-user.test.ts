import type { Client as SseClient } from 'graphql-sse';
import type { Client as WsClient } from 'graphql-ws';
import { rawStream, sseClient } from '../support/sse';
import { alice, bob, startGateway, type TestGateway } from '../support/testkit';
import { subscribe, waitUntil, wsClient, type Subscribed } from '../support/ws';

const MAX = 5;
const ACTIVITY = 'subscription A { sessionActivity { eventId } }';

describe('LIVE_MAX_OPERATIONS_PER_USER: one limit per user over WebSocket and SSE (issue 36)', () => {
  let t: TestGateway;
  const ws: WsClient[] = [];
  const sse: SseClient[] = [];
  const subscribers = () => t.gateway.live.executor.subscriberCount;
  const refusalOf = async (sub: Subscribed<unknown>): Promise<unknown> => sub.done.then(() => 'completed', (e: unknown) => e);

  beforeAll(async () => {
    t = await startGateway({ env: { LIVE_MAX_OPERATIONS_PER_USER: String(MAX) } });
  });
  afterAll(async () => {
    await Promise.all(ws.map(async (c) => c.dispose()));
    sse.forEach((c) => c.dispose());
    await t.close();
  });
  const wsOf = (token: string) => {
    const c = wsClient(t.url, token);
    ws.push(c);
    return c;
  };
  const sseOf = (token: string) => {
    const c = sseClient(t.url, token);
    sse.push(c);
    return c;
  };

  it('counts WebSocket and SSE subscriptions together, refuses the next on either, and gives slots back when they end', async () => {
    const aliceToken = t.tokenOf(alice);
    const first = wsOf(aliceToken);
    const second = wsOf(aliceToken);
    const onFirst = [subscribe(first, ACTIVITY), subscribe(first, ACTIVITY), subscribe(first, ACTIVITY)];
    const onSse = [subscribe(sseOf(aliceToken), ACTIVITY), subscribe(sseOf(aliceToken), ACTIVITY)];
    await waitUntil(() => subscribers() === MAX, 5_000, 'five subscriptions');

    // The sixth, on another socket: an error for that operation; the socket stays and answers.
    const sixth = subscribe(second, ACTIVITY);
    expect(await refusalOf(sixth)).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'TOO_MANY_SUBSCRIPTIONS' }) })]);
    const query = subscribe(second, '{ me { roles } }');
    expect((await query.waitFor(1))[0]).toEqual({ data: { me: { roles: [] } } });

    // Over SSE: 429.
    const refused = await rawStream(t.url, { token: aliceToken, body: { query: ACTIVITY } });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text)).toEqual({ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'TOO_MANY_SUBSCRIPTIONS' }) })] });

    // Another user is not affected.
    subscribe(wsOf(t.tokenOf(bob)), ACTIVITY);
    await waitUntil(() => subscribers() === MAX + 1, 5_000, "bob's subscription");

    // One completed by the client, one SSE stream closed: two slots back.
    onFirst[0]!.unsubscribe();
    onSse[0]!.unsubscribe();
    await waitUntil(() => subscribers() === MAX - 1, 5_000, 'two ended');
    const again = [subscribe(second, ACTIVITY), subscribe(second, ACTIVITY)];
    await waitUntil(() => subscribers() === MAX + 1, 5_000, 'two new');
    expect(await Promise.race([refusalOf(again[0]!), new Promise((r) => setTimeout(() => r('running'), 200))])).toBe('running');

    // A socket that goes away gives back every slot it held.
    await first.dispose();
    await waitUntil(() => subscribers() === MAX - 1, 5_000, 'the socket closed');
    subscribe(second, ACTIVITY);
    subscribe(second, ACTIVITY);
    await waitUntil(() => subscribers() === MAX + 1, 5_000, 'its slots used again');
    expect(await refusalOf(subscribe(second, ACTIVITY))).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'TOO_MANY_SUBSCRIPTIONS' }) })]);
  });
});

import { print } from 'graphql';
import type { Client as WsClient } from 'graphql-ws';
import type { Client as SseClient } from 'graphql-sse';
import { TurnStatusChangedDocument, type TurnStatusChangedSubscription } from '../../packages/client/src';
import { sseClient } from '../support/sse';
import { addTurn, completeTurn, failTurn } from '../support/turns';
import { sleep, subscribe, wsClient, type SubscribingClient } from '../support/ws';
import { alice, startGateway, type TestGateway } from '../support/testkit';

/** The typed client's own document, as a third-party client would send it. */
const STATUS = print(TurnStatusChangedDocument);
type Event = TurnStatusChangedSubscription['turnStatusChanged'];

let t: TestGateway;
const clients: (WsClient | SseClient)[] = [];
beforeAll(async () => {
  t = await startGateway();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
});
afterAll(() => t.close());

const transports: [string, () => SubscribingClient][] = [
  [
    'WebSocket',
    () => {
      const c = wsClient(t.url, t.tokenOf(alice));
      clients.push(c);
      return c;
    },
  ],
  [
    'SSE',
    () => {
      const c = sseClient(t.url, t.tokenOf(alice));
      clients.push(c);
      return c;
    },
  ],
];

describe.each(transports)('events replayed from afterEventId over %s', (_name, connect) => {
  it('carry the status each change had when it happened, not the turn as it is now', async () => {
    const { live } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    const session = await sessions.createSession(alice, { name: 'replayed', agentContextId: 'ac' });
    const from = await live.history.latestId('acme');
    const first = await addTurn(sessions, alice, session.id);
    await sleep(20);
    await completeTurn(sessions, alice, session.id, first.id, 'the answer');
    const second = await addTurn(sessions, alice, session.id);
    await sleep(20);
    await failTurn(sessions, alice, session.id, second.id);

    // Every change above happened before the subscription: all four come from the stored log.
    const feed = subscribe<{ turnStatusChanged: Event }>(connect(), STATUS, { sessionId: session.id, afterEventId: String(from) });
    const events = (await feed.waitFor(4)).map((r) => r.data!.turnStatusChanged);
    feed.unsubscribe();
    expect(events.map((e) => [e.turn.sequenceNumber, e.previousStatus, e.status])).toEqual([
      [1, null, 'PENDING'],
      [1, 'PENDING', 'COMPLETED'],
      [2, null, 'PENDING'],
      [2, 'PENDING', 'FAILED'],
    ]);
    const [pending, completed] = events;
    // The change's own time, not the turn's latest one.
    expect(Date.parse(completed!.statusTimeStamp)).toBeGreaterThan(Date.parse(pending!.statusTimeStamp));
    // `turn` is the turn as it is now, as the schema says.
    expect(pending!.turn).toMatchObject({ status: 'COMPLETED', agentAnswerSummary: 'the answer' });
    expect(pending!.turn.statusTimeStamp).toBe(completed!.statusTimeStamp);
  });
});

import type { Client } from 'graphql-ws';
import { addTurn } from '../support/turns';
import { sleep, subscribe, waitUntil, wsClient } from '../support/ws';
import { alice, startGateway, type TestGateway } from '../support/testkit';

const ACTIVITY = `subscription A($filter: AgentSessionFilter) { sessionActivity(filter: $filter) { eventId session { id name } } }`;
const FILTERS = 40;

describe('one user, many distinct sessionActivity filters (issue 36)', () => {
  let t: TestGateway;
  const clients: Client[] = [];
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await t.close();
  });

  it("reads the event's session once per event for all of a user's filters, not once per filter", async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(alice, { name: 'watched', agentContextId: 'ac', repo: 'repo-7' });
    // Within every limit: up to 100 operations per socket.
    const sockets = Array.from({ length: Math.ceil(FILTERS / 100) }, () => wsClient(t.url, t.tokenOf(alice)));
    clients.push(...sockets);
    // A group per filter; one of them (repo-7) matches the session.
    const subs = Array.from({ length: FILTERS }, (_, i) => subscribe(sockets[Math.floor(i / 100)]!, ACTIVITY, { filter: { repo: `repo-${i}` } }));
    await waitUntil(() => executor.subscriberCount === FILTERS, 10_000, 'every subscription');
    expect(executor.groupCount).toBe(FILTERS);

    await sleep(50);
    // Every read of sessions by id, batched or not, goes through here.
    const reads = jest.spyOn(t.gateway.services.sessionBatches, 'sessionsByIds');
    const EVENTS = 10;
    for (let i = 0; i < EVENTS; i++) await addTurn(sessions, alice, session.id);
    await subs[7]!.waitFor(EVENTS);
    await sleep(200);
    const calls = reads.mock.calls.length;
    reads.mockRestore();
    // One read per event for all the user's groups (it was one per group: FILTERS per event).
    expect(calls).toBe(EVENTS);
    expect(subs.map((s) => s.results.length)).toEqual(Array.from({ length: FILTERS }, (_, i) => (i === 7 ? 10 : 0)));
  });
});

import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { addTurn, completeTurn } from '../support/turns';
import { sleep, subscribe, waitUntil, wsClient } from '../support/ws';
import { admin, alice, bob, carol, startGateway, user, type TestGateway } from '../support/testkit';

const STATUS = `subscription S($sessionId: ID!) {
  turnStatusChanged(sessionId: $sessionId) { eventId status turn { id status } session { id name participants { id } } }
}`;
/** `forks` lists the forks the caller may read: a field whose value depends on who asks. */
const WITH_FORKS = `subscription F($sessionId: ID!) {
  turnStatusChanged(sessionId: $sessionId) { eventId turn { session { forks { totalCount } } } }
}`;
const ACTIVITY = `subscription A($filter: AgentSessionFilter) { sessionActivity(filter: $filter) { eventId session { id name } } }`;
/** Nothing read at execution: the feed's own admission is all that reads the session. */
const ACTIVITY_IDS = `subscription I($filter: AgentSessionFilter) { sessionActivity(filter: $filter) { eventId sessionId } }`;
type Status = { turnStatusChanged: { eventId: string; status: string; session: { id: string; name: string } } };
type Forks = { turnStatusChanged: { turn: { session: { forks: { totalCount: number } } } } };
type Activity = { sessionActivity: { session: { name: string } } };

describe('subscribers of different users share one execution where the selection does not depend on who asks (issue 35.8)', () => {
  let t: TestGateway;
  const clients: Client[] = [];
  const connect = (c: Caller) => {
    const client = wsClient(t.url, t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }));
    clients.push(client);
    return client;
  };
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
    await waitUntil(() => t.gateway.live.executor.groupCount === 0, 10_000, 'every group closed');
  });
  afterAll(() => t.close());

  it('executes each event once for users, participants and admins watching one session', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(carol, { name: 'watched by everyone', agentContextId: 'ac', isPublic: true });
    const viewers = [alice, bob, carol, admin('boss-a'), ...Array.from({ length: 6 }, (_, i) => user(`watcher-${i}`))];
    const subs = viewers.map((v) => subscribe<Status>(connect(v), STATUS, { sessionId: session.id }));
    await waitUntil(() => executor.subscriberCount === viewers.length, 10_000, 'every subscriber');
    expect(executor.groupCount).toBe(1);
    const before = executor.executions;

    const turn = await addTurn(sessions, carol, session.id);
    await completeTurn(sessions, carol, session.id, turn.id);
    await Promise.all(subs.map((s) => s.waitFor(2)));
    await sleep(50);

    expect(executor.executions - before).toBe(2);
    expect(new Set(subs.map((s) => JSON.stringify(s.results))).size).toBe(1);
    expect(subs[0]!.data.map((d) => d.turnStatusChanged.status)).toEqual(['PENDING', 'COMPLETED']);
  });

  it('keeps per-viewer results for a field that depends on who asks', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(carol, { name: 'forked by bob', agentContextId: 'ac', isPublic: true });
    const first = await addTurn(sessions, carol, session.id);
    await completeTurn(sessions, carol, session.id, first.id);
    // Bob's fork is his own (private): he sees it among the session's forks, alice does not.
    await t.gateway.services.forks.fork(bob, session.id, first.id, 'bob-fork');
    const forAlice = subscribe<Forks>(connect(alice), WITH_FORKS, { sessionId: session.id });
    const forBob = subscribe<Forks>(connect(bob), WITH_FORKS, { sessionId: session.id });
    await waitUntil(() => executor.subscriberCount === 2, 10_000, 'both subscribers');
    expect(executor.groupCount).toBe(2);

    await addTurn(sessions, carol, session.id);
    const [[a], [b]] = await Promise.all([forAlice.waitFor(1), forBob.waitFor(1)]);
    expect(a?.data?.turnStatusChanged.turn.session.forks.totalCount).toBe(0);
    expect(b?.data?.turnStatusChanged.turn.session.forks.totalCount).toBe(1);
  });

  it('stops a shared feed for a viewer who may no longer read the session, and goes on for those who still may', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(carol, { name: 'made private', agentContextId: 'ac', isPublic: true });
    // Bob takes part (he adds a turn) while it is public: he may still read it once private.
    const bobs = await addTurn(sessions, bob, session.id);
    await completeTurn(sessions, bob, session.id, bobs.id);
    const forAlice = subscribe<Status>(connect(alice), STATUS, { sessionId: session.id });
    const forBob = subscribe<Status>(connect(bob), STATUS, { sessionId: session.id });
    const forBoss = subscribe<Status>(connect(admin('boss-b')), STATUS, { sessionId: session.id });
    const aliceActivity = subscribe<Activity>(connect(alice), ACTIVITY, { filter: { ownerUserId: 'carol' } });
    const bobActivity = subscribe<Activity>(connect(bob), ACTIVITY, { filter: { ownerUserId: 'carol' } });
    await waitUntil(() => executor.subscriberCount === 5, 10_000, 'every subscriber');
    // One group per operation, whoever subscribed.
    expect(executor.groupCount).toBe(2);

    const turn = await addTurn(sessions, carol, session.id);
    await Promise.all([forAlice, forBob, forBoss, aliceActivity, bobActivity].map((s) => s.waitFor(1)));
    await sessions.updateSession(carol, session.id, { isPublic: false });
    await completeTurn(sessions, carol, session.id, turn.id, 'secret answer');
    await addTurn(sessions, carol, session.id);

    await forAlice.done;
    expect(forAlice.results).toHaveLength(2);
    expect(forAlice.results[1]).toEqual({ data: null, errors: [expect.objectContaining({ extensions: { code: 'NOT_FOUND' } })] });
    await Promise.all([forBob.waitFor(3), forBoss.waitFor(3), bobActivity.waitFor(3)]);
    await sleep(100);
    expect(forBob.data.map((d) => d.turnStatusChanged.status)).toEqual(['PENDING', 'COMPLETED', 'PENDING']);
    expect(aliceActivity.results).toHaveLength(1);
  });
});

describe('status events reach only the filtered feeds they can match (issue 36.2)', () => {
  let t: TestGateway;
  const clients: Client[] = [];
  beforeAll(async () => {
    t = await startGateway({ hooks: { sweeper: false } });
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await t.close();
  });

  it("reads the event's session once for the whole org and wakes none of a user's feeds that pin other values", async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const { executor } = t.gateway.live;
    const session = await sessions.createSession(alice, { name: 'unwatched', agentContextId: 'ac', repo: 'repo-x' });
    const client = wsClient(t.url, t.tokenOf(alice));
    clients.push(client);
    const pinned = [
      ...Array.from({ length: 10 }, (_, i) => ({ repo: `repo-${i}` })),
      ...Array.from({ length: 10 }, (_, i) => ({ ownerUserId: `owner-${i}` })),
      ...Array.from({ length: 10 }, (_, i) => ({ participantId: `someone-${i}` })),
    ];
    const subs = pinned.map((filter) => subscribe(client, ACTIVITY_IDS, { filter }));
    const matching = subscribe(client, ACTIVITY_IDS, { filter: { repo: 'repo-x' } });
    await waitUntil(() => executor.subscriberCount === pinned.length + 1, 10_000, 'every subscription');

    const perCaller = jest.spyOn(t.gateway.services.sessionBatches, 'sessionsByIds');
    const perOrg = jest.spyOn(t.gateway.services.sessionBatches, 'sessionsInOrg');
    const EVENTS = 5;
    for (let i = 0; i < EVENTS; i++) await addTurn(sessions, alice, session.id);
    await matching.waitFor(EVENTS);
    await sleep(200);
    const reads = { perCaller: perCaller.mock.calls.length, perOrg: perOrg.mock.calls.length };
    perCaller.mockRestore();
    perOrg.mockRestore();

    // One read of the session per event to route it (shared with the matching feed's access check), none per feed.
    expect(reads.perOrg).toBe(EVENTS);
    expect(reads.perCaller).toBe(0);
    expect(subs.every((s) => s.results.length === 0)).toBe(true);
    expect(matching.results).toHaveLength(EVENTS);
  });
});

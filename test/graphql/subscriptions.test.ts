import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import type { SessionRecord } from '../../src/domain/session';
import { addTurn, completeTurn, failTurn } from '../support/turns';
import { subscribe, waitUntil, wsClient } from '../support/ws';
import { alice, bob, boss, mallory, startGateway, type TestGateway } from '../support/testkit';

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
  t = await startGateway();
  const ac = await t.gateway.services.contexts.upsertAgentContext(boss, { name: 'Backend Platform', vectorCollection: 'backend', defaultModel: 'm' });
  agentContextId = ac.id;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map(async (c) => c.dispose()));
  await waitUntil(() => subscribers() === 0, 5_000, 'subscribers to leave');
});
afterAll(() => t.close());

const newSession = (owner: Caller, name: string, extra: Partial<{ isPublic: boolean; repo: string; workspaceId: string }> = {}): Promise<SessionRecord> =>
  t.gateway.sessions.lifecycle.createSession(owner, { name, agentContextId, ...extra });

describe('turnStatusChanged', () => {
  it('delivers every status change of the session once, in order, with turn and session resolved', async () => {
    const sessions = t.gateway.sessions.lifecycle;
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

const ACTIVITY = `subscription A($filter: AgentSessionFilter, $after: ID) {
  sessionActivity(filter: $filter, afterEventId: $after) { eventId sessionId sequenceNumber status session { id name } }
}`;
interface ActivityEvent {
  eventId: string;
  sessionId: string;
  sequenceNumber: number;
  status: string;
  session: { id: string; name: string };
}
type Activity = { sessionActivity: ActivityEvent };
const names = (sub: { data: Activity[] }) => sub.data.map((d) => d.sessionActivity.session.name);

describe('sessionActivity', () => {
  it('shows admins the whole org and others only what they may read, with every filter field applied', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const mine = await newSession(alice, 'a-mine', { repo: 'acme/api', workspaceId: 'alice.laptop' });
    const bobPublic = await newSession(bob, 'a-bob PUBLIC', { isPublic: true, repo: 'acme/web' });
    const bobPrivate = await newSession(bob, 'a-bob private');
    // alice takes part while it is public; it stays readable to her once private.
    const shared = await newSession(bob, 'a-shared', { isPublic: true });
    const aliceTurn = await addTurn(sessions, alice, shared.id);
    await completeTurn(sessions, alice, shared.id, aliceTurn.id);
    await sessions.updateSession(bob, shared.id, { isPublic: false });
    const globex = await newSession(mallory, 'a-globex');

    const feeds = {
      boss: subscribe<Activity>(connect(boss), ACTIVITY),
      alice: subscribe<Activity>(connect(alice), ACTIVITY),
      aliceAsParticipant: subscribe<Activity>(connect(alice), ACTIVITY, { filter: { participantId: 'alice' } }),
      bossForAlice: subscribe<Activity>(connect(boss), ACTIVITY, { filter: { participantId: 'alice' } }),
      bossForBob: subscribe<Activity>(connect(boss), ACTIVITY, { filter: { participantId: 'bob', search: 'PRIV' } }),
      repo: subscribe<Activity>(connect(boss), ACTIVITY, { filter: { repo: 'acme/api', workspaceId: 'alice.laptop' } }),
      search: subscribe<Activity>(connect(alice), ACTIVITY, { filter: { search: 'public' } }),
      owner: subscribe<Activity>(connect(boss), ACTIVITY, { filter: { ownerUserId: 'bob', agentContextId } }),
      nothing: subscribe<Activity>(connect(boss), ACTIVITY, { filter: { agentContextId: 'no-such-context' } }),
      mallory: subscribe<Activity>(connect(mallory), ACTIVITY),
    };
    await waitUntil(() => subscribers() === Object.keys(feeds).length);

    for (const [owner, session] of [
      [alice, mine],
      [bob, bobPublic],
      [bob, bobPrivate],
      [bob, shared],
      [mallory, globex],
    ] as const) {
      await addTurn(sessions, owner, session.id);
    }
    const expected = {
      boss: ['a-mine', 'a-bob PUBLIC', 'a-bob private', 'a-shared'],
      alice: ['a-mine', 'a-bob PUBLIC', 'a-shared'],
      aliceAsParticipant: ['a-mine', 'a-shared'],
      bossForAlice: ['a-mine', 'a-shared'],
      bossForBob: ['a-bob private'],
      repo: ['a-mine'],
      search: ['a-bob PUBLIC'],
      owner: ['a-bob PUBLIC', 'a-bob private', 'a-shared'],
      nothing: [],
      mallory: ['a-globex'],
    };
    for (const [name, sub] of Object.entries(feeds)) await sub.waitFor(expected[name as keyof typeof expected].length);
    // Give stray events a chance to show up before checking there are none.
    await addTurn(sessions, mallory, globex.id);
    await feeds.mallory.waitFor(2);
    for (const [name, sub] of Object.entries(feeds)) {
      const want = name === 'mallory' ? ['a-globex', 'a-globex'] : expected[name as keyof typeof expected];
      expect({ name, got: names(sub) }).toEqual({ name, got: want });
    }
  });

  it('refuses includeDeleted to non-admins and lets admins follow deleted sessions only when they ask', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const refused = subscribe(connect(alice), ACTIVITY, { filter: { includeDeleted: true } });
    await refused.done;
    expect(refused.results[0]?.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const doomed = await newSession(alice, 'dlt-doomed');
    const pending = await addTurn(sessions, alice, doomed.id);
    await sessions.deleteSession(alice, doomed.id);
    const withDeleted = subscribe<Activity>(connect(boss), ACTIVITY, { filter: { includeDeleted: true, search: 'dlt' } });
    const withoutDeleted = subscribe<Activity>(connect(boss), ACTIVITY, { filter: { search: 'dlt' } });
    const owner = subscribe<Activity>(connect(alice), ACTIVITY, { filter: { search: 'dlt' } });
    await waitUntil(() => subscribers() === 3);
    // The turn that was running when its session was deleted still finishes.
    await completeTurn(sessions, alice, doomed.id, pending.id);
    const marker = await newSession(alice, 'dlt-marker');
    await addTurn(sessions, alice, marker.id);
    await Promise.all([withDeleted.waitFor(2), withoutDeleted.waitFor(1), owner.waitFor(1)]);
    expect(names(withDeleted)).toEqual(['dlt-doomed', 'dlt-marker']);
    expect(names(withoutDeleted)).toEqual(['dlt-marker']);
    expect(names(owner)).toEqual(['dlt-marker']);
  });
});

describe('authorisation at delivery time', () => {
  it('stops a session feed once the session is made private, and skips it in the activity feed', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const revoked = await newSession(bob, 'rvk-revoked', { isPublic: true });
    const stillMine = await newSession(alice, 'rvk-still-mine');
    const feed = subscribe<{ turnStatusChanged: StatusEvent }>(connect(alice), STATUS, { sessionId: revoked.id });
    const activity = subscribe<Activity>(connect(alice), ACTIVITY, { filter: { search: 'rvk' } });
    await waitUntil(() => subscribers() === 2);

    const turn = await addTurn(sessions, bob, revoked.id, 'while public');
    await feed.waitFor(1);
    await activity.waitFor(1);
    await sessions.updateSession(bob, revoked.id, { isPublic: false });
    await completeTurn(sessions, bob, revoked.id, turn.id, 'secret answer');
    await addTurn(sessions, alice, stillMine.id);

    await feed.done;
    expect(feed.results).toHaveLength(2);
    expect(feed.results[1]).toEqual({ data: null, errors: [expect.objectContaining({ extensions: { code: 'NOT_FOUND' } })] });
    expect(JSON.stringify(feed.results)).not.toContain('secret answer');
    await activity.waitFor(2);
    expect(names(activity)).toEqual(['rvk-revoked', 'rvk-still-mine']);
  });

  it('stops a non-admin feed when the session is deleted; admins keep following it', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const session = await newSession(alice, 'x-deleted');
    const turn = await addTurn(sessions, alice, session.id);
    const owner = subscribe<{ turnStatusChanged: StatusEvent }>(connect(alice), STATUS, { sessionId: session.id });
    const overseer = subscribe<{ turnStatusChanged: StatusEvent }>(connect(boss), STATUS, { sessionId: session.id });
    await waitUntil(() => subscribers() === 2);
    await sessions.deleteSession(alice, session.id);
    await completeTurn(sessions, alice, session.id, turn.id);
    await owner.done;
    expect(owner.results[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const [event] = await overseer.waitFor(1);
    expect(event?.data?.turnStatusChanged.status).toBe('COMPLETED');
  });
});

const OUTPUT = `subscription O($sessionId: ID!, $turnId: ID!) { turnOutput(sessionId: $sessionId, turnId: $turnId) { sessionId turnId index textDelta } }`;
type Output = { turnOutput: { sessionId: string; turnId: string; index: number; textDelta: string } };

describe('turnOutput', () => {
  it('gives a late joiner the text so far from index 0, then live deltas, and completes when the turn leaves PENDING', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const session = await newSession(alice, 'o-stream', { isPublic: true });
    const turn = await addTurn(sessions, alice, session.id);
    const ref = { orgId: 'acme', sessionId: session.id, turnId: turn.id };
    const append = (index: number, textDelta: string) => t.gateway.output.append({ ...ref, index, textDelta });
    const early = subscribe<Output>(connect(alice), OUTPUT, { sessionId: session.id, turnId: turn.id });
    await waitUntil(() => subscribers() === 1);
    append(0, 'Hel');
    append(1, 'lo ');
    await early.waitFor(2);
    const late = subscribe<Output>(connect(bob), OUTPUT, { sessionId: session.id, turnId: turn.id });
    const lateSameUser = subscribe<Output>(connect(alice), OUTPUT, { sessionId: session.id, turnId: turn.id });
    await late.waitFor(2);
    await lateSameUser.waitFor(2);
    append(2, 'wor');
    append(3, 'ld');
    await completeTurn(sessions, alice, session.id, turn.id, 'Hello world');
    t.gateway.output.end(ref);
    for (const sub of [early, late, lateSameUser]) {
      await sub.done;
      expect(sub.data.map((d) => d.turnOutput.index)).toEqual([0, 1, 2, 3]);
      expect(sub.data.map((d) => d.turnOutput.textDelta).join('')).toBe('Hello world');
      expect(sub.data.every((d) => d.turnOutput.turnId === turn.id && d.turnOutput.sessionId === session.id)).toBe(true);
    }

    // Joining after the turn finished: the kept text, then complete.
    const after = subscribe<Output>(connect(alice), OUTPUT, { sessionId: session.id, turnId: turn.id });
    await after.done;
    expect(after.data.map((d) => d.turnOutput.textDelta).join('')).toBe('Hello world');
  });

  it('refuses a turn of a session the caller may not read', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const session = await newSession(bob, 'o-private');
    const turn = await addTurn(sessions, bob, session.id);
    t.gateway.output.append({ orgId: 'acme', sessionId: session.id, turnId: turn.id, index: 0, textDelta: 'secret' });
    for (const caller of [alice, mallory]) {
      const sub = subscribe<Output>(connect(caller), OUTPUT, { sessionId: session.id, turnId: turn.id });
      await sub.done;
      expect(sub.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'NOT_FOUND' } })] }]);
    }
    await failTurn(sessions, bob, session.id, turn.id);
  });
});

describe('resume with afterEventId', () => {
  it('replays what was missed across a forced disconnect, then continues live without a gap or a duplicate', async () => {
    const sessions = t.gateway.sessions.lifecycle;
    const session = await newSession(alice, 'resume me');
    const first = connect(alice);
    const before = subscribe<Activity>(first, ACTIVITY, { filter: { search: 'resume me' } });
    await waitUntil(() => subscribers() === 1);
    const t1 = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, t1.id);
    const seen = await before.waitFor(2);
    const lastSeen = seen[1]!.data!.sessionActivity.eventId;

    first.terminate();
    await waitUntil(() => subscribers() === 0);
    const t2 = await addTurn(sessions, alice, session.id);
    await completeTurn(sessions, alice, session.id, t2.id);

    const resumed = subscribe<Activity>(connect(alice), ACTIVITY, { filter: { search: 'resume me' }, after: lastSeen });
    await resumed.waitFor(2);
    await addTurn(sessions, alice, session.id);
    await resumed.waitFor(3);
    expect(resumed.data.map((d) => [d.sessionActivity.sequenceNumber, d.sessionActivity.status])).toEqual([
      [2, 'PENDING'],
      [2, 'COMPLETED'],
      [3, 'PENDING'],
    ]);
    expect(Number(resumed.data[0]!.sessionActivity.eventId)).toBeGreaterThan(Number(lastSeen));
  });

  it('misses nothing and repeats nothing when events keep coming while it resumes', async () => {
    const { live } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    const session = await newSession(alice, 'busy session');
    const startAt = await live.history.latestId('acme');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 15; i++) {
        const turn = await addTurn(sessions, alice, session.id);
        await completeTurn(sessions, alice, session.id, turn.id);
      }
      writing = false;
    })();
    await waitUntil(async () => (await live.history.latestId('acme')) > startAt + 6, 5_000, 'some events to exist');
    const feed = subscribe<{ turnStatusChanged: StatusEvent }>(connect(alice), STATUS, { sessionId: session.id, after: String(startAt) });
    await writer;
    expect(writing).toBe(false);
    // One more event after the burst: a late duplicate of any earlier one would arrive before it.
    await addTurn(sessions, alice, session.id);
    const stored = await live.history.after({ orgId: 'acme', sessionId: session.id }, startAt, 1000);
    expect(stored).toHaveLength(31);
    await feed.waitFor(31);
    expect(feed.data.map((d) => Number(d.turnStatusChanged.eventId))).toEqual(stored.map((e) => e.eventId));
  });

  it('refuses malformed and unknown event ids', async () => {
    const session = await newSession(alice, 'bad resume');
    for (const after of ['abc', '-1', '1.5', String(Number.MAX_SAFE_INTEGER)]) {
      const sub = subscribe(connect(alice), STATUS, { sessionId: session.id, after });
      await sub.done;
      expect({ after, code: sub.results[0]?.errors?.[0]?.extensions?.code }).toEqual({ after, code: 'BAD_USER_INPUT' });
    }
  });
});

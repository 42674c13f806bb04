import type { Client } from 'graphql-ws';
import type { Caller } from '../../src/domain/caller';
import { describeWithMysql } from '../support/services';
import { addTurn, completeTurn } from '../support/turns';
import { subscribe, waitUntil, wsClient } from '../support/ws';
import { admin, boss, startGateway, user, type TestGateway } from '../support/testkit';

/**
 * Issue 8: ids are compared byte for byte on every database. Tokens whose org or user id
 * differs from acme's / user-2's only in case or a trailing space see and change nothing of
 * theirs, over HTTP and WebSocket.
 */
const owner = user('user-2');
/** Same letters, other case or a trailing space: each must be a stranger. */
const lookalikeOrgs = ['ACME', 'acme ', 'Acme'];
const lookalikeUser = user('USER-2');

const SESSION = 'query($id: ID!) { agentSession(id: $id) { id name } }';
const TURN = 'query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { id } lastAgentSessionTurn(sessionId: $s) { id } }';
const LIST = `query($f: AgentSessionFilter) {
  agentSessions(first: 100, filter: $f) { totalCount edges { node { id } } }
  agentSessionsForUser(userId: "user-2", first: 100) { edges { node { id } } }
  agentContexts { id } conversationContexts { id }
}`;
const ACTIVITY = 'subscription { sessionActivity { sessionId status } }';
type Listed = {
  agentSessions: { totalCount: number; edges: { node: { id: string } }[] };
  agentSessionsForUser: { edges: { node: { id: string } }[] };
  agentContexts: { id: string }[];
  conversationContexts: { id: string }[];
};

function exactIdSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;
  let privateId: string;
  let publicId: string;
  let turnId: string;
  let agentContextId: string;
  const clients: Client[] = [];
  const tokenOf = (c: Caller) => t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });
  const connect = (c: Caller) => {
    const client = wsClient(t.url, tokenOf(c));
    clients.push(client);
    return client;
  };
  const strangers = (): Caller[] => [...lookalikeOrgs.flatMap((org) => [admin('boss', org), user('user-2', org)]), lookalikeUser];

  beforeAll(async () => {
    t = await startGateway({ database });
    const { contexts } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    agentContextId = (await contexts.upsertAgentContext(boss, { name: 'Backend', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' })).id;
    await contexts.upsertConversationContext(boss, { name: 'Chat', systemPrompt: 'Be brief.' });
    privateId = (await sessions.createSession(owner, { name: 'private of user-2', agentContextId })).id;
    publicId = (await sessions.createSession(owner, { name: 'public of user-2', agentContextId, isPublic: true })).id;
    turnId = (await addTurn(sessions, owner, privateId)).id;
    await completeTurn(sessions, owner, privateId, turnId);
  });
  afterEach(() => Promise.all(clients.splice(0).map(async (c) => c.dispose())));
  afterAll(() => t.close());

  it('lets acme and user-2 themselves see their data (the control)', async () => {
    const mine = await t.gql<Listed>(tokenOf(owner), LIST, { f: { participantId: 'user-2' } });
    expect(mine.body.data?.agentSessions.totalCount).toBe(2);
    expect(mine.body.data?.agentContexts).toHaveLength(1);
    expect((await t.gql(tokenOf(owner), SESSION, { id: privateId })).body.data).toEqual({ agentSession: { id: privateId, name: 'private of user-2' } });
    expect((await t.gql(tokenOf(boss), TURN, { s: privateId, t: turnId })).body.data).toEqual({
      agentSessionTurn: { id: turnId },
      lastAgentSessionTurn: { id: turnId },
    });
  });

  it('lists nothing of acme for ACME, "acme " or Acme, and only public sessions for USER-2', async () => {
    for (const stranger of strangers()) {
      const res = await t.gql<Listed>(tokenOf(stranger), LIST, {});
      const seen = res.body.data!;
      const expected = stranger === lookalikeUser ? [publicId] : [];
      expect({ who: stranger, sessions: seen.agentSessions.edges.map((e) => e.node.id) }).toEqual({ who: stranger, sessions: expected });
      expect(seen.agentSessions.totalCount).toBe(expected.length);
      expect(seen.agentSessionsForUser.edges.map((e) => e.node.id)).toEqual(expected);
      expect(seen.agentContexts.length + seen.conversationContexts.length).toBe(stranger === lookalikeUser ? 2 : 0);
    }
  });

  it('matches participant and owner filters exactly, even for acme\'s own admin', async () => {
    for (const f of [{ participantId: 'USER-2' }, { participantId: 'user-2 ' }, { ownerUserId: 'USER-2' }, { agentContextId: agentContextId.toUpperCase() }]) {
      const res = await t.gql<Listed>(tokenOf(boss), LIST, { f });
      expect({ f, total: res.body.data?.agentSessions.totalCount }).toEqual({ f, total: 0 });
    }
  });

  it('reads nothing by id', async () => {
    for (const stranger of strangers()) {
      const session = await t.gql(tokenOf(stranger), SESSION, { id: privateId });
      expect({ who: stranger, data: session.body.data }).toEqual({ who: stranger, data: { agentSession: null } });
      const turn = await t.gql(tokenOf(stranger), TURN, { s: privateId, t: turnId });
      expect(turn.body.data).toEqual({ agentSessionTurn: null, lastAgentSessionTurn: null });
    }
  });

  it('changes nothing: renaming the agent context or the session, deleting it, cancelling or adding a turn', async () => {
    for (const stranger of strangers()) {
      const token = tokenOf(stranger);
      const rename = await t.gql(token, 'mutation($id: ID!) { upsertAgentContext(input: { id: $id, name: "pwned", vectorCollection: "x", defaultModel: "m" }) { id } }', {
        id: agentContextId,
      });
      expect(rename.body.errors?.[0]?.extensions?.code).toMatch(/^(NOT_FOUND|FORBIDDEN)$/);
      const update = await t.gql(token, 'mutation($id: ID!) { updateAgentSession(id: $id, patch: { name: "pwned" }) { id } }', { id: privateId });
      expect(update.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const remove = await t.gql(token, 'mutation($id: ID!) { deleteAgentSession(id: $id) }', { id: privateId });
      expect(remove.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const cancel = await t.gql(token, 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { id } }', { s: privateId, t: turnId });
      expect(cancel.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const execute = await t.gql(token, 'mutation($i: AgentExecuteInput!) { executeAsync(input: $i) { turnId } }', {
        i: { sessionId: privateId, agentContextId, instruction: 'Continue in their session' },
      });
      expect(execute.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const { contexts } = t.gateway.services;
    const sessions = t.gateway.sessions.lifecycle;
    expect((await contexts.listAgentContexts('acme')).map((c) => c.name)).toEqual(['Backend']);
    expect(await sessions.getSession(owner, privateId)).toMatchObject({ name: 'private of user-2', isDeleted: false, turnCount: 1 });
  });

  it('refuses subscriptions to acme\'s session and delivers none of its events to lookalikes', async () => {
    for (const stranger of strangers()) {
      const feed = subscribe(connect(stranger), 'subscription($s: ID!) { turnStatusChanged(sessionId: $s) { eventId } }', { s: privateId });
      await feed.done.catch(() => undefined);
      expect(feed.results[0]?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    const watchers = [...strangers(), owner].map((c) => ({ caller: c, feed: subscribe<{ sessionActivity: { sessionId: string } }>(connect(c), ACTIVITY) }));
    await waitUntil(() => t.gateway.live.executor.subscriberCount === watchers.length);
    const sessions = t.gateway.sessions.lifecycle;
    const second = await addTurn(sessions, owner, privateId);
    await completeTurn(sessions, owner, privateId, second.id);
    const onPublic = await addTurn(sessions, owner, publicId);
    await completeTurn(sessions, owner, publicId, onPublic.id);
    const control = watchers.at(-1)!.feed;
    await control.waitFor(4);
    // USER-2 may read the public session: its events are the marker that delivery has caught up.
    const lookalike = watchers.find((w) => w.caller === lookalikeUser)!.feed;
    await lookalike.waitFor(2);
    await new Promise((r) => setTimeout(r, 200));
    for (const { caller, feed } of watchers.slice(0, -1)) {
      const sessionIds = feed.data.map((d) => d.sessionActivity.sessionId);
      expect({ who: caller, sessionIds }).toEqual({ who: caller, sessionIds: caller === lookalikeUser ? [publicId, publicId] : [] });
    }
  });
}

describe('exact ids on embedded SQLite', () => exactIdSuite('sqlite'));
describeWithMysql('exact ids on MySQL/MariaDB', () => exactIdSuite('mysql'));

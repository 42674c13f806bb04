import jwt from 'jsonwebtoken';
import type { Caller } from '../../src/domain/caller';
import type { SessionRecord } from '../../src/domain/session';
import { RenameSessionDocument, SessionDetailDocument, SessionListDocument } from '../generated/operations';
import { alice, bob, boss, mallory, startGateway, TEST_SECRET, type TestGateway } from '../support/testkit';

let t: TestGateway;
const tokenOf = (c: Caller) =>
  t.token({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] });

const LIST = `query List($filter: AgentSessionFilter, $orderBy: AgentSessionOrder, $first: Int, $after: String) {
  agentSessions(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node { id name ownerUser { id } lastTurnStatus turnCount } }
  }
}`;

interface ListData {
  agentSessions: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: { id: string; name: string; ownerUser: { id: string }; lastTurnStatus: string | null; turnCount: number } }[];
  };
}

let aliceSessions: SessionRecord[];
let publicOfBob: SessionRecord;
let privateOfBob: SessionRecord;

beforeAll(async () => {
  t = await startGateway();
  const { contexts } = t.gateway.services;
  const sessions = t.gateway.sessions.lifecycle;
  const ac = await contexts.upsertAgentContext(boss, { name: 'Backend Platform', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' });
  const cc = await contexts.upsertConversationContext(boss, { name: 'Backend Refactor', systemPrompt: 'Be careful.' });
  aliceSessions = [];
  for (const name of ['alpha', 'Bravo', 'charlie', 'delta_x', 'echo%']) {
    aliceSessions.push(
      await sessions.createSession(alice, {
        name,
        agentContextId: ac.id,
        conversationContextId: cc.id,
        repo: name === 'alpha' ? 'acme/api' : 'acme/web',
        workspaceId: 'alice.laptop',
      }),
    );
  }
  publicOfBob = await sessions.createSession(bob, { name: 'bob public', agentContextId: ac.id, isPublic: true });
  privateOfBob = await sessions.createSession(bob, { name: 'bob private', agentContextId: ac.id });
  const turn = await sessions.addTurn(alice, publicOfBob.id, { instructionSummary: 'alice helps bob' });
  await sessions.completeTurn(alice, publicOfBob.id, turn.id, {
    agentAnswerSummary: 'ok',
    fullAgentAnswerUrl: null,
    openAIResponseId: 'r1',
    openAIResponseReceivedDate: new Date(),
  });
  await sessions.createSession(mallory, { name: 'globex secret', agentContextId: 'x' });
});
afterAll(() => t.close());

describe('authentication', () => {
  const me = '{ me { user { id text } organization { id text } roles } }';

  it('answers a valid token with the viewer it names', async () => {
    const res = await t.gql(tokenOf(boss), me);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      me: { user: { id: 'boss', text: 'Name of boss' }, organization: { id: 'acme', text: 'Org acme' }, roles: ['admin'] },
    });
  });

  it.each([
    ['no token', null],
    ['a malformed token', 'not-a-jwt'],
    ['an expired token', jwt.sign({ sub: 'alice', org: 'acme', exp: Math.floor(Date.now() / 1000) - 60 }, TEST_SECRET)],
    ['a token signed with another secret', jwt.sign({ sub: 'alice', org: 'acme' }, 'some-other-secret', { expiresIn: 60 })],
    ['a token without org', jwt.sign({ sub: 'alice' }, TEST_SECRET, { expiresIn: 60 })],
    ['an unsigned token', jwt.sign({ sub: 'alice', org: 'acme' }, '', { algorithm: 'none', expiresIn: 60 })],
  ])('refuses %s with HTTP 401 UNAUTHENTICATED', async (_what, token) => {
    const res = await t.gql(token, me);
    expect(res.status).toBe(401);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.body.data ?? null).toBeNull();
  });
});

describe('agentSessions', () => {
  it('shows a member what they own, take part in, or is public, and an admin the whole org', async () => {
    const ids = async (c: Caller) =>
      new Set((await t.gql<ListData>(tokenOf(c), LIST, { first: 100 })).body.data?.agentSessions.edges.map((e) => e.node.id));
    const forAlice = await ids(alice);
    expect(forAlice).toEqual(new Set([...aliceSessions.map((s) => s.id), publicOfBob.id]));
    const forBob = await ids(bob);
    expect(forBob).toEqual(new Set([publicOfBob.id, privateOfBob.id]));
    const forBoss = await ids(boss);
    expect(forBoss.size).toBe(7);
    expect((await ids(mallory)).size).toBe(1);
  });

  it.each(['LAST_UPDATED_DESC', 'LAST_UPDATED_ASC', 'CREATED_DESC', 'NAME_ASC'])(
    'pages through every session exactly once in %s order',
    async (orderBy) => {
      const seen: string[] = [];
      let after: string | null = null;
      for (let i = 0; i < 10; i++) {
        const res: { body: { data?: ListData | null } } = await t.gql<ListData>(tokenOf(boss), LIST, { orderBy, first: 2, after });
        const conn = res.body.data!.agentSessions;
        expect(conn.totalCount).toBe(7);
        seen.push(...conn.edges.map((e) => e.node.name));
        if (!conn.pageInfo.hasNextPage) break;
        after = conn.pageInfo.endCursor;
      }
      expect(seen).toHaveLength(7);
      expect(new Set(seen).size).toBe(7);
      if (orderBy === 'NAME_ASC') expect(seen.map((n) => n.toLowerCase())).toEqual([...seen.map((n) => n.toLowerCase())].sort());
    },
  );

  it('pages backward with last/before, with both PageInfo flags and cursors, and refuses mixing directions', async () => {
    const BACK = `query Back($last: Int, $before: String, $first: Int, $after: String) {
      agentSessions(orderBy: NAME_ASC, last: $last, before: $before, first: $first, after: $after) {
        totalCount totalCountIsLowerBound
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { node { name } }
      }
    }`;
    type Back = { agentSessions: { totalCount: number; totalCountIsLowerBound: boolean; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string }; edges: { node: { name: string } }[] } };
    const page = async (variables: Record<string, unknown>) => (await t.gql<Back>(tokenOf(boss), BACK, variables)).body;
    const all = (await page({ first: 7 })).data!.agentSessions.edges.map((e) => e.node.name);
    const tail = (await page({ last: 3 })).data!.agentSessions;
    expect(tail.edges.map((e) => e.node.name)).toEqual(all.slice(4));
    expect(tail.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    expect(tail).toMatchObject({ totalCount: 7, totalCountIsLowerBound: false });
    const before = (await page({ last: 3, before: tail.pageInfo.startCursor })).data!.agentSessions;
    expect(before.edges.map((e) => e.node.name)).toEqual(all.slice(1, 4));
    expect(before.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const head = (await page({ last: 3, before: before.pageInfo.startCursor })).data!.agentSessions;
    expect(head.edges.map((e) => e.node.name)).toEqual(all.slice(0, 1));
    expect(head.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    // Forward from the middle: hasPreviousPage says what lies behind the cursor.
    const forward = (await page({ first: 2, after: head.pageInfo.endCursor })).data!.agentSessions;
    expect(forward.edges.map((e) => e.node.name)).toEqual(all.slice(1, 3));
    expect(forward.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    for (const mixed of [{ first: 2, last: 2 }, { last: 2, after: head.pageInfo.endCursor }]) {
      expect((await page(mixed)).errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    }
  });

  it('applies every filter field', async () => {
    const names = async (filter: Record<string, unknown>, c: Caller = boss) =>
      (await t.gql<ListData>(tokenOf(c), LIST, { filter, first: 100, orderBy: 'NAME_ASC' })).body.data?.agentSessions.edges
        .map((e) => e.node.name)
        .sort();
    expect(await names({ participantId: 'alice' })).toEqual(['Bravo', 'alpha', 'bob public', 'charlie', 'delta_x', 'echo%']);
    expect(await names({ ownerUserId: 'bob' })).toEqual(['bob private', 'bob public']);
    expect(await names({ repo: 'acme/api' })).toEqual(['alpha']);
    // Search: each word begins a word of the name or description (issue 35's full-text rule).
    expect(await names({ workspaceId: 'alice.laptop', search: 'CHAR' })).toEqual(['charlie']);
    expect(await names({ search: 'delt' })).toEqual(['delta_x']);
    expect(await names({ search: 'echo' })).toEqual(['echo%']);
    expect(await names({ search: 'harlie' })).toEqual([]);
    expect(await names({ lastTurnStatus: 'COMPLETED' })).toEqual(['bob public']);
    expect(await names({ agentContextId: aliceSessions[0]!.agentContextId, conversationContextId: aliceSessions[0]!.conversationContextId })).toHaveLength(5);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect(await names({ updatedAfter: future })).toEqual([]);
    expect(await names({ updatedBefore: future })).toHaveLength(7);
  });

  it('lets only admins include deleted sessions', async () => {
    const victim = await t.gateway.sessions.lifecycle.createSession(alice, { name: 'to delete', agentContextId: 'ac' });
    const del = await t.gql(tokenOf(alice), 'mutation($id: ID!) { deleteAgentSession(id: $id) }', { id: victim.id });
    expect(del.body.data).toEqual({ deleteAgentSession: true });
    const denied = await t.gql(tokenOf(alice), LIST, { filter: { includeDeleted: true } });
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const mine = await t.gql<ListData>(tokenOf(alice), LIST, { first: 100 });
    expect(mine.body.data?.agentSessions.edges.map((e) => e.node.id)).not.toContain(victim.id);
    const all = await t.gql<ListData>(tokenOf(boss), LIST, { filter: { includeDeleted: true }, first: 100 });
    expect(all.body.data?.agentSessions.edges.map((e) => e.node.id)).toContain(victim.id);
  });

  it.each([
    ['first: 0', { first: 0 }, 'BAD_USER_INPUT'],
    ['first: 101', { first: 101 }, 'BAD_USER_INPUT'],
    ['a malformed cursor', { after: 'garbage!' }, 'BAD_USER_INPUT'],
    ['a cursor of another ordering', { after: Buffer.from('["NAME_ASC","x","y"]').toString('base64url') }, 'BAD_USER_INPUT'],
    ['a search without a word of three letters or digits', { filter: { search: '% _' } }, 'BAD_USER_INPUT'],
    ['an unknown enum value', { orderBy: 'SIZE_DESC' }, 'BAD_USER_INPUT'],
    ['an over-long search', { filter: { search: 's'.repeat(201) } }, 'BAD_USER_INPUT'],
    ['a malformed date', { filter: { updatedAfter: 'yesterday' } }, 'BAD_USER_INPUT'],
  ])('refuses %s with a clear error', async (_what, variables, code) => {
    const res = await t.gql(tokenOf(alice), LIST, variables);
    expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
    expect(res.body.data?.agentSessions ?? null).toBeNull();
  });

  it('lists sessions of a participant through agentSessionsForUser', async () => {
    const res = await t.gql<{ agentSessionsForUser: ListData['agentSessions'] }>(
      tokenOf(bob),
      '{ agentSessionsForUser(userId: "alice") { totalCount edges { node { name } } } }',
    );
    // Bob sees only what he may read: alice's private sessions stay hidden from him.
    expect(res.body.data?.agentSessionsForUser.edges.map((e) => e.node.name)).toEqual(['bob public']);
    expect(res.body.data?.agentSessionsForUser.totalCount).toBe(1);
  });
});

describe('one session', () => {
  const ONE = `query($id: ID!) { agentSession(id: $id) {
    id name isPublic isDeleted agentContextName conversationContextName ownerOrganization { id }
    participants { id text } lastTurn { sequenceNumber status session { id } }
    turns(first: 1) { totalCount pageInfo { hasNextPage endCursor } edges { node { instructionSummary createdByUser { id } } } }
    summary { id turnCount lastTurnStatus agentContextName }
    usage { inputTokens totalTokens isEstimated }
  } }`;

  it('resolves names, participants, last turn, turns and summary', async () => {
    const res = await t.gql(tokenOf(bob), ONE, { id: publicOfBob.id });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data).toEqual({
      agentSession: {
        id: publicOfBob.id,
        name: 'bob public',
        isPublic: true,
        isDeleted: false,
        agentContextName: 'Backend Platform',
        conversationContextName: null,
        ownerOrganization: { id: 'acme' },
        participants: [
          { id: 'bob', text: 'Name of bob' },
          { id: 'alice', text: 'Name of alice' },
        ],
        lastTurn: { sequenceNumber: 1, status: 'COMPLETED', session: { id: publicOfBob.id } },
        turns: {
          totalCount: 1,
          pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
          edges: [{ node: { instructionSummary: 'alice helps bob', createdByUser: { id: 'alice' } } }],
        },
        summary: { id: publicOfBob.id, turnCount: 1, lastTurnStatus: 'COMPLETED', agentContextName: 'Backend Platform' },
        usage: { inputTokens: 0, totalTokens: 0, isEstimated: false },
      },
    });
  });

  it('answers another org and unknown ids alike: null for reads, NOT_FOUND for writes', async () => {
    for (const id of [publicOfBob.id, 'no-such-session']) {
      const read = await t.gql(tokenOf(mallory), ONE, { id });
      expect(read.body).toEqual({ data: { agentSession: null } });
      const turn = await t.gql(tokenOf(mallory), 'query($id: ID!) { lastAgentSessionTurn(sessionId: $id) { id } }', { id });
      expect(turn.body).toEqual({ data: { lastAgentSessionTurn: null } });
      const write = await t.gql(tokenOf(mallory), 'mutation($id: ID!) { updateAgentSession(id: $id, patch: { name: "pwned" }) { id } }', { id });
      expect(write.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(write.body.errors?.[0]?.message).toBe('session not found');
    }
    expect((await t.gateway.services.sessions.getSession(bob, publicOfBob.id))?.name).toBe('bob public');
  });

  it('updates a session for its owner and refuses an over-long name without changing anything', async () => {
    const update = 'mutation($id: ID!, $patch: AgentSessionPatch!) { updateAgentSession(id: $id, patch: $patch) { name description category isPublic } }';
    const s = aliceSessions[1]!;
    const ok = await t.gql(tokenOf(alice), update, { id: s.id, patch: { description: 'now described', category: 'feature' } });
    expect(ok.body.data).toEqual({ updateAgentSession: { name: 'Bravo', description: 'now described', category: 'feature', isPublic: false } });
    const tooLong = await t.gql(tokenOf(alice), update, { id: s.id, patch: { name: 'n'.repeat(201), description: 'changed?' } });
    expect(tooLong.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name' });
    expect((await t.gateway.services.sessions.getSession(alice, s.id))?.description).toBe('now described');
    const notOwner = await t.gql(tokenOf(bob), update, { id: publicOfBob.id, patch: { name: 'x' } });
    expect(notOwner.body.data).toEqual({ updateAgentSession: { name: 'x', description: null, category: null, isPublic: true } });
    const stranger = await t.gql(tokenOf(alice), update, { id: publicOfBob.id, patch: { name: 'mine' } });
    expect(stranger.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('contexts', () => {
  const upsert = 'mutation($input: AgentContextInput!) { upsertAgentContext(input: $input) { id name vectorCollection } }';

  it('lets only admins upsert, within their own org', async () => {
    const input = { name: 'Docs', vectorCollection: 'docs', defaultModel: 'gpt-4.1' };
    const denied = await t.gql(tokenOf(alice), upsert, { input });
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const created = await t.gql<{ upsertAgentContext: { id: string } }>(tokenOf(boss), upsert, { input });
    const id = created.body.data!.upsertAgentContext.id;
    const renamed = await t.gql(tokenOf(boss), upsert, { input: { ...input, id, name: 'Docs v2' } });
    expect(renamed.body.data).toEqual({ upsertAgentContext: { id, name: 'Docs v2', vectorCollection: 'docs' } });
    const foreign = await t.gql(t.token({ userId: 'root', orgId: 'globex', roles: ['admin'] }), upsert, { input: { ...input, id } });
    expect(foreign.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const list = await t.gql<{ agentContexts: { name: string }[] }>(tokenOf(alice), '{ agentContexts { name } }');
    expect(list.body.data?.agentContexts.map((c) => c.name)).toEqual(['Backend Platform', 'Docs v2']);
  });

  it('shows a renamed context under its new name in the very next list, and never a name from another org', async () => {
    const names = '{ agentSessions(first: 100) { edges { node { id agentContextName conversationContextName } } } }';
    type Names = { agentSessions: { edges: { node: { id: string; agentContextName: string | null; conversationContextName: string | null } }[] } };
    const ac = await t.gql<{ upsertAgentContext: { id: string } }>(tokenOf(boss), upsert, { input: { name: 'Ops', vectorCollection: 'ops', defaultModel: 'm' } });
    const acId = ac.body.data!.upsertAgentContext.id;
    const ccUpsert = 'mutation($input: ConversationContextInput!) { upsertConversationContext(input: $input) { id } }';
    const cc = await t.gql<{ upsertConversationContext: { id: string } }>(tokenOf(boss), ccUpsert, { input: { name: 'Triage', systemPrompt: 'p' } });
    const ccId = cc.body.data!.upsertConversationContext.id;
    const session = await t.gateway.sessions.lifecycle.createSession(alice, { name: 'ops session', agentContextId: acId, conversationContextId: ccId });
    // A session of another org naming acme's context id must not learn its name.
    const foreign = await t.gateway.sessions.lifecycle.createSession(mallory, { name: 'globex ops', agentContextId: acId, conversationContextId: ccId });
    const nodeOf = async (c: Caller, id: string) => (await t.gql<Names>(tokenOf(c), names)).body.data!.agentSessions.edges.find((e) => e.node.id === id)?.node;

    expect(await nodeOf(alice, session.id)).toEqual({ id: session.id, agentContextName: 'Ops', conversationContextName: 'Triage' });
    await t.gql(tokenOf(boss), upsert, { input: { id: acId, name: 'Operations', vectorCollection: 'ops', defaultModel: 'm' } });
    await t.gql(tokenOf(boss), ccUpsert, { input: { id: ccId, name: 'Incident triage', systemPrompt: 'p' } });
    expect(await nodeOf(alice, session.id)).toEqual({ id: session.id, agentContextName: 'Operations', conversationContextName: 'Incident triage' });
    expect(await nodeOf(mallory, foreign.id)).toEqual({ id: foreign.id, agentContextName: null, conversationContextName: null });
    const detail = await t.gql<{ agentSession: { agentContextName: string; summary: { conversationContextName: string } } }>(
      tokenOf(alice),
      'query($id: ID!) { agentSession(id: $id) { agentContextName summary { conversationContextName } } }',
      { id: session.id },
    );
    expect(detail.body.data?.agentSession).toEqual({ agentContextName: 'Operations', summary: { conversationContextName: 'Incident triage' } });
  });

  it('refuses a vectorCollection with "__" (the org separator in collection names), on create and on update, changing nothing', async () => {
    const created = await t.gql<{ upsertAgentContext: { id: string } }>(tokenOf(boss), upsert, { input: { name: 'EU', vectorCollection: 'eu_docs', defaultModel: 'm' } });
    const id = created.body.data!.upsertAgentContext.id;
    for (const input of [{ name: 'Bad', vectorCollection: 'eu__docs', defaultModel: 'm' }, { id, name: 'EU', vectorCollection: 'eu__docs', defaultModel: 'm' }]) {
      const res = await t.gql(tokenOf(boss), upsert, { input });
      expect(res.body.errors?.[0]).toMatchObject({ message: expect.stringMatching(/must not contain "__"/), extensions: { code: 'BAD_USER_INPUT', field: 'vectorCollection' } });
    }
    const list = await t.gql<{ agentContexts: { name: string; vectorCollection: string }[] }>(tokenOf(boss), '{ agentContexts { name vectorCollection } }');
    expect(list.body.data?.agentContexts.filter((c) => c.name === 'EU' || c.name === 'Bad')).toEqual([{ name: 'EU', vectorCollection: 'eu_docs' }]);
  });

  it('validates conversation contexts: temperature, tool names and schemas', async () => {
    const m = 'mutation($input: ConversationContextInput!) { upsertConversationContext(input: $input) { id tools { name parametersJson } } }';
    const base = { name: 'Tools', systemPrompt: 'p' };
    for (const bad of [
      { ...base, temperature: 3 },
      { ...base, temperature: 1e308 },
      { ...base, temperature: -0.5 },
      { ...base, tools: [{ name: 'has space', parametersJson: '{}' }] },
      { ...base, tools: [{ name: 'ok', parametersJson: '[1' }] },
      { ...base, tools: [{ name: 'dup', parametersJson: '{}' }, { name: 'dup', parametersJson: '{}' }] },
    ]) {
      const res = await t.gql(tokenOf(boss), m, { input: bad });
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    const ok = await t.gql(tokenOf(boss), m, {
      input: { ...base, tools: [{ name: 'read_file', parametersJson: '{ "type": "object" }' }] },
    });
    expect(ok.body.data).toMatchObject({ upsertConversationContext: { tools: [{ name: 'read_file', parametersJson: '{"type":"object"}' }] } });
  });
});

describe('typed operations (codegen)', () => {
  it('renames a session and reads it back with the generated documents', async () => {
    const s = aliceSessions[2]!;
    const renamed = await t.op(tokenOf(alice), RenameSessionDocument, { id: s.id, name: 'charlie renamed' });
    expect(renamed.body.data?.updateAgentSession).toEqual({ id: s.id, name: 'charlie renamed' });
    const detail = await t.op(tokenOf(alice), SessionDetailDocument, { id: s.id });
    expect(detail.body.data?.agentSession).toMatchObject({ name: 'charlie renamed', turns: { totalCount: 0, edges: [] }, participants: [{ id: 'alice' }] });
    const list = await t.op(tokenOf(alice), SessionListDocument, { filter: { search: 'renamed' } });
    expect(list.body.data?.agentSessions.edges.map((e) => e.node.name)).toEqual(['charlie renamed']);
  });
});

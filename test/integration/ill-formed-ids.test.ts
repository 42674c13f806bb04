import type { Caller } from '../../src/domain/caller';
import { describeWithMysql } from '../support/services';
import { rawStream, sseClient } from '../support/sse';
import { startGateway, type TestGateway } from '../support/testkit';
import { subscribe, waitUntil, wsClient } from '../support/ws';

/**
 * Issue 36: MariaDB and SQLite keep UTF-8, where a lone surrogate has no form; the drivers
 * write U+FFFD instead, so an org or user id with one would be stored, and matched, as
 * another's. Ids must be well-formed: such tokens are refused (401), such ids in arguments,
 * inputs, REST bodies and blob paths are BAD_USER_INPUT (400), and nothing changes.
 */
const ORG = 'corp\uFFFD';
const owner: Caller = { userId: 'user-\uFFFD', userName: 'Owner', orgId: ORG, orgName: 'Corp', roles: [] };
const orgAdmin: Caller = { ...owner, userId: 'boss', userName: 'Boss', roles: ['admin'] };
/** What the database would store as ORG, or as the owner's id. */
const aliasOrgs = ['corp\ud800', 'corp\udc00', 'corp\udfff', 'corp\udbff', 'corp\ud83d'];
const aliasUsers = ['user-\ud800', 'user-\udc00', 'user-\udfff'];
const ILL_FORMED_IDS = ['x\ud800', '\udc00', 'x\udfffy', 'x\u0000', 'a'.repeat(65), ''];

const SESSION = 'query($id: ID!) { agentSession(id: $id) { id name turnCount } }';
const LIST = 'query($f: AgentSessionFilter) { agentSessions(first: 50, filter: $f) { totalCount edges { node { id name } } } }';
const RENAME = 'mutation($id: ID!, $name: String) { updateAgentSession(id: $id, patch: { name: $name }) { id name } }';
const EXECUTE_ASYNC = 'mutation($i: AgentExecuteInput!) { executeAsync(input: $i) { sessionId turnId } }';
const TURN = 'query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { id status } }';
const CANCEL = 'mutation($s: ID!, $t: ID!) { cancelTurn(sessionId: $s, turnId: $t) { id } }';

type Session = { id: string; name: string; turnCount: number };

function illFormedIdSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;
  let agentContextId: string;
  let sessionId: string;
  let turnId: string;
  let answerUrl: string;
  const tokenOf = (c: Caller) => t.tokenOf(c);
  const rest = async (token: string, body: unknown) => {
    const res = await fetch(`${t.url}/api/ai/agent/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const blob = async (token: string, path: string) => {
    const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, text: await res.text() };
  };
  /** What the owner's org holds, read as its admin through the API: the control for "changes nothing". */
  const state = async () => {
    const list = await t.gql<{ agentSessions: { totalCount: number; edges: { node: { id: string; name: string } }[] } }>(tokenOf(orgAdmin), LIST, {
      f: { includeDeleted: true },
    });
    const session = await t.gql<{ agentSession: Session }>(tokenOf(owner), SESSION, { id: sessionId });
    return { sessions: list.body.data?.agentSessions, session: session.body.data?.agentSession };
  };

  beforeAll(async () => {
    t = await startGateway({ database });
    agentContextId = (await t.gateway.services.contexts.upsertAgentContext(orgAdmin, { name: 'Backend', vectorCollection: 'backend', defaultModel: 'gpt-4.1-mini' })).id;
    // The owner's session and turn, made through the REST API (the offline model answers).
    const made = await rest(tokenOf(owner), { agentContextId, instruction: 'Where is the rate limiter?', sessionName: 'private of the owner' });
    expect(made.status).toBe(200);
    sessionId = made.body.sessionId as string;
    turnId = made.body.turnId as string;
    const turn = await t.gql<{ agentSessionTurn: { fullAgentAnswerUrl: string } }>(
      tokenOf(owner),
      'query($s: ID!, $t: ID!) { agentSessionTurn(sessionId: $s, turnId: $t) { fullAgentAnswerUrl } }',
      { s: sessionId, t: turnId },
    );
    answerUrl = turn.body.data!.agentSessionTurn.fullAgentAnswerUrl;
  });
  afterAll(() => t.close());

  it('serves the owner of corp\\uFFFD its session, turn and answer (the control)', async () => {
    expect((await t.gql(tokenOf(owner), SESSION, { id: sessionId })).body.data).toEqual({
      agentSession: { id: sessionId, name: 'private of the owner', turnCount: 1 },
    });
    expect((await blob(tokenOf(owner), answerUrl)).status).toBe(200);
    expect((await t.gql(tokenOf(orgAdmin), LIST, {})).body.data).toMatchObject({ agentSessions: { totalCount: 1 } });
  });

  it('refuses tokens whose org or user id has a lone surrogate (401): they read, execute into and rename nothing', async () => {
    const before = await state();
    const strangers: Caller[] = [
      ...aliasOrgs.flatMap((orgId) => [{ ...owner, orgId }, { ...orgAdmin, orgId }]),
      ...aliasUsers.map((userId) => ({ ...owner, userId })),
    ];
    for (const stranger of strangers) {
      const token = tokenOf(stranger);
      const who = { org: visible(stranger.orgId), user: visible(stranger.userId) };
      const answers = {
        read: (await t.gql(token, SESSION, { id: sessionId })).status,
        list: (await t.gql(token, LIST, {})).status,
        turn: (await t.gql(token, TURN, { s: sessionId, t: turnId })).status,
        rename: (await t.gql(token, RENAME, { id: sessionId, name: 'pwned' })).status,
        executeInto: (await t.gql(token, EXECUTE_ASYNC, { i: { sessionId, agentContextId, instruction: 'mine now' } })).status,
        cancel: (await t.gql(token, CANCEL, { s: sessionId, t: turnId })).status,
        rest: (await rest(token, { sessionId, agentContextId, instruction: 'mine now' })).status,
        blob: (await blob(token, answerUrl)).status,
        sse: (await rawStream(t.url, { token, body: { query: `subscription { turnStatusChanged(sessionId: "${sessionId}") { eventId } }` } })).status,
      };
      expect({ who, answers }).toEqual({
        who,
        answers: { read: 401, list: 401, turn: 401, rename: 401, executeInto: 401, cancel: 401, rest: 401, blob: 401, sse: 401 },
      });
    }
    expect(await state()).toEqual(before);
  });

  it('closes a WebSocket that signs in with such a token (4403)', async () => {
    const closed: number[] = [];
    const client = wsClient(t.url, tokenOf({ ...owner, orgId: 'corp\ud800' }), { onClosed: (code) => closed.push(code) });
    const stop = client.subscribe({ query: `subscription { turnStatusChanged(sessionId: "${sessionId}") { eventId } }` }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    await waitUntil(() => closed.length > 0);
    stop();
    await client.dispose();
    expect(closed[0]).toBe(4403);
  });

  it('answers an ill-formed, empty or over-long ID argument or input field with 400 BAD_USER_INPUT and changes nothing', async () => {
    const before = await state();
    const token = tokenOf(owner);
    for (const bad of ILL_FORMED_IDS) {
      const calls = {
        read: await t.gql(token, SESSION, { id: bad }),
        rename: await t.gql(token, RENAME, { id: bad, name: 'renamed' }),
        turn: await t.gql(token, TURN, { s: sessionId, t: bad }),
        cancel: await t.gql(token, CANCEL, { s: bad, t: turnId }),
        filter: await t.gql(token, LIST, { f: { participantId: bad } }),
        executeInto: await t.gql(token, EXECUTE_ASYNC, { i: { sessionId: bad, agentContextId, instruction: 'go on' } }),
        agentContext: await t.gql(token, EXECUTE_ASYNC, { i: { agentContextId: bad, instruction: 'go on' } }),
        toolCallId: await t.gql(token, EXECUTE_ASYNC, {
          i: { sessionId, turnId, agentContextId, toolResults: [{ toolCallId: bad, executionMs: 1, resultJson: '{}' }] },
        }),
      };
      for (const [call, res] of Object.entries(calls)) {
        const seen = { bad: visible(bad), call, status: res.status, code: res.body.errors?.[0]?.extensions?.code, data: res.body.data };
        expect(seen).toEqual({ bad: visible(bad), call, status: 400, code: 'BAD_USER_INPUT', data: undefined });
      }
    }
    expect(await state()).toEqual(before);
  });

  it('refuses them over WebSocket and SSE too, as variables and as literals', async () => {
    const token = tokenOf(owner);
    const STATUS = 'subscription($s: ID!) { turnStatusChanged(sessionId: $s) { eventId } }';
    const requests = [
      { query: STATUS, variables: { s: 'x\ud800' } },
      { query: STATUS, variables: { s: 'a'.repeat(65) } },
      { query: 'subscription { turnStatusChanged(sessionId: "x\\u0001") { eventId } }', variables: {} },
      { query: 'query($id: ID!) { agentSession(id: $id) { id } }', variables: { id: '\udfff' } },
    ];
    for (const client of [wsClient(t.url, token), sseClient(t.url, token)]) {
      for (const { query, variables } of requests) {
        const feed = subscribe(client, query, variables);
        const refusal = await feed.done.then(
          () => feed.results[0]?.errors?.[0],
          (e: unknown) => (Array.isArray(e) ? (e[0] as { extensions?: Record<string, unknown> }) : undefined),
        );
        expect({ query, code: refusal?.extensions?.code }).toEqual({ query, code: 'BAD_USER_INPUT' });
      }
      await client.dispose();
    }
  });

  it('refuses ill-formed, control or over-long ID literals written into the document the same way', async () => {
    for (const literal of ['x\\u0000', 'x\\n', 'a'.repeat(65), '']) {
      const res = await t.gql(tokenOf(owner), `{ agentSession(id: "${literal}") { id } }`);
      expect({ literal, status: res.status, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ literal, status: 400, code: 'BAD_USER_INPUT' });
      expect(res.body.errors?.[0]?.message).toMatch(/^an ID must/);
    }
    // GraphQL's own lexer refuses a lone surrogate in a document before any scalar sees it.
    const lexed = await t.gql(tokenOf(owner), '{ agentSession(id: "x\\ud800") { id } }');
    expect(lexed.status).toBe(400);
    expect(lexed.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
  });

  it('answers ill-formed ids in REST bodies with 400 BAD_USER_INPUT and changes nothing', async () => {
    const before = await state();
    const token = tokenOf(owner);
    for (const bad of ILL_FORMED_IDS) {
      const bodies = {
        sessionId: { sessionId: bad, agentContextId, instruction: 'go on' },
        turnId: { sessionId, turnId: bad, agentContextId, instruction: 'go on' },
        agentContextId: { agentContextId: bad, instruction: 'go on' },
        conversationContextId: { agentContextId, conversationContextId: bad, instruction: 'go on' },
        toolCallId: { sessionId, turnId, agentContextId, toolResults: [{ toolCallId: bad, executionMs: 1, resultJson: '{}' }] },
      };
      for (const [field, body] of Object.entries(bodies)) {
        const res = await rest(token, body);
        expect({ bad: visible(bad), field, status: res.status, code: res.body.errorCode }).toEqual({ bad: visible(bad), field, status: 400, code: 'BAD_USER_INPUT' });
      }
    }
    expect(await state()).toEqual(before);
  });

  it('answers blob paths with ill-formed or over-long ids with 400 BAD_USER_INPUT', async () => {
    const token = tokenOf(owner);
    const [, , , , , file] = answerUrl.split('/');
    const paths = [
      `/blobs/sessions/%ED%A0%80/turns/${turnId}/${file}`,
      `/blobs/sessions/${sessionId}/turns/%ED%B3%BF/${file}`,
      `/blobs/sessions/${sessionId}%FF/turns/${turnId}/${file}`,
      `/blobs/sessions/${sessionId}/turns/${turnId}%00/${file}`,
      `/blobs/sessions/${'a'.repeat(65)}/turns/${turnId}/${file}`,
    ];
    for (const path of paths) {
      const res = await blob(token, path);
      expect({ path, status: res.status, body: JSON.parse(res.text) }).toEqual({ path, status: 400, body: expect.objectContaining({ errorCode: 'BAD_USER_INPUT' }) });
    }
    // Well-formed but naming nothing stays 404, and the real URL still serves.
    expect((await blob(token, `/blobs/sessions/caf%C3%A9/turns/${turnId}/${file}`)).status).toBe(404);
    expect((await blob(token, answerUrl)).status).toBe(200);
  });

  it('refuses an unpaired surrogate in names, instructions and other stored text (BAD_USER_INPUT) rather than storing U+FFFD', async () => {
    const before = await state();
    const token = tokenOf(owner);
    const rename = await t.gql(token, RENAME, { id: sessionId, name: 'renamed \ud800' });
    expect(rename.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'name' });
    const inputs = [
      { instruction: 'why \udc00?' },
      { instruction: 'go on', sessionName: 'new \udfff' },
      { instruction: 'go on', activeFiles: [{ path: 'src/a.ts', content: 'const a = "\ud800";' }] },
      { instruction: 'go on', retrievalPathPrefixes: ['src/\ud800'] },
    ];
    for (const input of inputs) {
      const res = await t.gql(token, EXECUTE_ASYNC, { i: { agentContextId, ...input } });
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect((await rest(token, { agentContextId, ...input })).status).toBe(400);
    }
    const context = await t.gql(tokenOf(orgAdmin), 'mutation($n: String!) { upsertAgentContext(input: { name: $n, vectorCollection: "x", defaultModel: "m" }) { id } }', {
      n: 'ctx \ud800',
    });
    expect(context.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await state()).toEqual(before);
    expect(await t.gateway.services.contexts.listAgentContexts(ORG)).toHaveLength(1);
  });
}

/** Lone surrogates as escapes, so a failure message shows which id it was. */
const visible = (s: string): string => JSON.stringify(s).slice(1, -1).replace(/[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

describe('ill-formed ids on embedded SQLite', () => illFormedIdSuite('sqlite'));
describeWithMysql('ill-formed ids on MySQL/MariaDB', () => illFormedIdSuite('mysql'));

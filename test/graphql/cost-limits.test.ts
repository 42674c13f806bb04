import type { Client } from 'graphql-ws';
import { DEFAULT_MAX_COST } from '../../src/config';
import { MAX_PAGE_SIZE } from '../../src/domain/pagination';
import { FLOOD_WITH_DEFAULT, FLOOD_WITH_LITERAL, FLOOD_WITH_VARIABLE, SESSION_TURNS, SUMMARY_PAGE } from '../support/client-queries';
import { addTurn, completeTurn } from '../support/turns';
import { subscribe, waitUntil, wsClient } from '../support/ws';
import { alice, bob, startGateway, type TestGateway } from '../support/testkit';

async function sessionWithTurns(t: TestGateway, turns: number): Promise<string> {
  const sessions = t.gateway.sessions.lifecycle;
  const session = await sessions.createSession(alice, { name: `with ${turns} turns`, agentContextId: 'ac', isPublic: true });
  for (let i = 0; i < turns; i++) {
    const turn = await addTurn(sessions, i % 2 === 0 ? alice : bob, session.id, `instruction ${i}`);
    await completeTurn(sessions, alice, session.id, turn.id, `answer ${i}`);
  }
  return session.id;
}

/** A gateway with alice's session of `turns` turns, for one describe block; WebSocket clients closed with it. */
function gatewayWithSession(turns: number, env: Record<string, string> = {}) {
  const h = { t: null as unknown as TestGateway, token: '', sessionId: '' };
  const clients: Client[] = [];
  beforeAll(async () => {
    h.t = await startGateway({ env, hooks: { sweeper: false } });
    h.token = h.t.token({ userId: 'alice' });
    h.sessionId = await sessionWithTurns(h.t, turns);
  });
  afterAll(async () => {
    await Promise.all(clients.map(async (c) => c.dispose()));
    await h.t.close();
  });
  const connect = () => {
    const client = wsClient(h.t.url, h.token);
    clients.push(client);
    return client;
  };
  return { h, connect };
}

describe('the cost limit, on HTTP and WebSocket alike', () => {
  const { h, connect } = gatewayWithSession(3);
  /** Statements that read sessions or turns: any means the operation was executed. */
  const sessionReads = () => h.t.statements.filter((sql) => /agent_session/.test(sql)).length;

  const floods = [
    ['page sizes from a variable', FLOOD_WITH_VARIABLE, () => ({ id: h.sessionId, n: 100 })],
    ['page sizes left to the schema default', FLOOD_WITH_DEFAULT, () => ({ id: h.sessionId })],
    ['page sizes as literals', FLOOD_WITH_LITERAL, () => ({ id: h.sessionId })],
  ] as const;
  const refusal = expect.objectContaining({
    message: expect.stringMatching(new RegExp(`^Query cost \\d+ exceeds the limit of ${DEFAULT_MAX_COST}`)),
    extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED', cost: expect.any(Number), maxCost: DEFAULT_MAX_COST }),
  });

  it.each(floods)('refuses the flood over HTTP before executing it, with %s', async (_how, query, variables) => {
    h.t.statements.length = 0;
    const res = await h.t.gql(h.token, query, variables());
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toEqual([refusal]);
    expect(sessionReads()).toBe(0);
  });

  it.each(floods)('refuses the flood over WebSocket before executing it, with %s', async (_how, query, variables) => {
    h.t.statements.length = 0;
    const flood = subscribe(connect(), query, variables());
    await expect(flood.done).rejects.toEqual([refusal]);
    expect(sessionReads()).toBe(0);
  });

  it('lets a dashboard page of 100 summaries and a page of 100 turns in, on both transports', async () => {
    const summaries = await h.t.gql(h.token, SUMMARY_PAGE, { first: MAX_PAGE_SIZE });
    expect(summaries.body.errors).toBeUndefined();
    expect(summaries.body.data).toMatchObject({ agentSessions: { totalCount: 1 } });
    const turns = await h.t.gql<{ agentSession: { turns: { edges: unknown[] } } }>(h.token, SESSION_TURNS, { id: h.sessionId, first: MAX_PAGE_SIZE });
    expect(turns.body.errors).toBeUndefined();
    expect(turns.body.data?.agentSession.turns.edges).toHaveLength(3);

    const overWs = subscribe<{ agentSession: { participants: { id: string }[] } }>(connect(), SESSION_TURNS, { id: h.sessionId, first: MAX_PAGE_SIZE });
    await overWs.done;
    expect(overWs.results[0]?.errors).toBeUndefined();
    expect(overWs.data[0]?.agentSession.participants.map((p) => p.id).sort()).toEqual(['alice', 'bob']);
  });
});

describe('the response budget (GRAPHQL_MAX_RESPONSE_ITEMS)', () => {
  const { h, connect } = gatewayWithSession(30, { GRAPHQL_MAX_RESPONSE_ITEMS: '25' });
  const PAGE = 'query P($id: ID!, $first: Int) { agentSession(id: $id) { name turns(first: $first) { edges { node { id warnings } } } } }';
  const tooLarge = { data: null, errors: [{ message: expect.stringMatching(/more than 25 list items/), extensions: { code: 'RESPONSE_TOO_LARGE', maxItems: 25 } }] };

  it('answers a response that would hold more list items with one error and no partial data, over HTTP', async () => {
    const res = await h.t.gql(h.token, PAGE, { id: h.sessionId, first: 30 });
    expect(res.body).toEqual(tooLarge);
    const small = await h.t.gql<{ agentSession: { turns: { edges: unknown[] } } }>(h.token, PAGE, { id: h.sessionId, first: 20 });
    expect(small.body.errors).toBeUndefined();
    expect(small.body.data?.agentSession.turns.edges).toHaveLength(20);
  });

  it('does the same over WebSocket', async () => {
    const query = subscribe(connect(), PAGE, { id: h.sessionId, first: 30 });
    await query.done;
    expect(query.results).toEqual([tooLarge]);
  });

  it('applies to each subscription event on its own', async () => {
    const live = subscribe(
      connect(),
      'subscription S($id: ID!) { turnStatusChanged(sessionId: $id) { status turn { session { turns(first: 30) { edges { node { id } } } } } } }',
      { id: h.sessionId },
    );
    await waitUntil(() => h.t.gateway.live.executor.subscriberCount === 1);
    const sessions = h.t.gateway.sessions.lifecycle;
    await addTurn(sessions, alice, h.sessionId, 'one more');
    const [event] = await live.waitFor(1);
    expect(event).toEqual(tooLarge);
    live.unsubscribe();
  });
});

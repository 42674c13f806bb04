import type { Caller } from '../../src/domain/caller';
import { describeWithMysql } from '../support/services';
import { addTurn } from '../support/turns';
import { alice, bob, boss, EXECUTE_SETUP, globexAdmin, mallory, startGateway, type TestGateway } from '../support/testkit';

const NODE = `query N($id: ID!) { node(id: $id) { __typename id
  ... on AgentSession { name }
  ... on AgentSessionTurn { sessionId sequenceNumber }
  ... on AgentContext { name }
  ... on ConversationContext { name }
  ... on WebhookEndpoint { url }
  ... on WebhookDelivery { eventType } } }`;
const NODES = `query Ns($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`;
const CREATE_ENDPOINT = `mutation C($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }`;
const DELIVERIES = `query D($id: ID!) { webhookDeliveries(endpointId: $id) { edges { node { id } } } }`;

type NodeAnswer = { __typename: string; id: string; [field: string]: unknown } | null;

function nodeSuite(database: 'sqlite' | 'mysql'): void {
  let t: TestGateway;
  let privateSession: { id: string };
  let publicSession: { id: string };
  let turnId: string;
  let endpointId: string;
  let deliveryId: string;

  const node = async (caller: Caller, id: string) => {
    const res = await t.gql<{ node: NodeAnswer }>(t.tokenOf(caller), NODE, { id });
    expect(res.body.errors).toBeUndefined();
    return res.body.data?.node ?? null;
  };
  const nodes = async (caller: Caller, ids: string[]) => {
    const res = await t.gql<{ nodes: NodeAnswer[] }>(t.tokenOf(caller), NODES, { ids });
    expect(res.body.errors).toBeUndefined();
    return res.body.data?.nodes ?? [];
  };

  beforeAll(async () => {
    t = await startGateway({ ...EXECUTE_SETUP, database, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    const created = await t.gql<{ createWebhookEndpoint: { endpoint: { id: string } } }>(t.tokenOf(boss), CREATE_ENDPOINT, {
      input: { url: 'http://127.0.0.1:9/hook', events: ['SESSION_CREATED'] },
    });
    expect(created.body.errors).toBeUndefined();
    endpointId = created.body.data!.createWebhookEndpoint.endpoint.id;
    const sessions = t.gateway.sessions.lifecycle;
    privateSession = await sessions.createSession(alice, { name: 'private of alice', agentContextId: t.agentContextId });
    publicSession = await sessions.createSession(bob, { name: 'public of bob', agentContextId: t.agentContextId, isPublic: true });
    turnId = (await addTurn(sessions, alice, privateSession.id)).id;
    const deliveries = await t.gql<{ webhookDeliveries: { edges: { node: { id: string } }[] } }>(t.tokenOf(boss), DELIVERIES, { id: endpointId });
    deliveryId = deliveries.body.data!.webhookDeliveries.edges[0]!.node.id;
  });
  afterAll(() => t?.close());

  it('fetches every kind of object again by the id the API handed out, with its own fields', async () => {
    expect(await node(alice, privateSession.id)).toEqual({ __typename: 'AgentSession', id: privateSession.id, name: 'private of alice' });
    expect(await node(alice, turnId)).toEqual({ __typename: 'AgentSessionTurn', id: turnId, sessionId: privateSession.id, sequenceNumber: 1 });
    expect(await node(alice, t.agentContextId)).toMatchObject({ __typename: 'AgentContext', id: t.agentContextId });
    expect(await node(alice, t.conversationContextId)).toMatchObject({ __typename: 'ConversationContext', id: t.conversationContextId });
    expect(await node(boss, endpointId)).toEqual({ __typename: 'WebhookEndpoint', id: endpointId, url: 'http://127.0.0.1:9/hook' });
    expect(await node(boss, deliveryId)).toEqual({ __typename: 'WebhookDelivery', id: deliveryId, eventType: 'SESSION_CREATED' });
  });

  it('answers null for what the caller may not see, exactly as for an id that never existed', async () => {
    // Another user's private session and its turn; webhooks to a member who is not an admin.
    for (const id of [privateSession.id, turnId, endpointId, deliveryId, 'no-such-id']) expect(await node(bob, id)).toBeNull();
    expect(await node(bob, publicSession.id)).toMatchObject({ __typename: 'AgentSession' });
    // Another organisation sees nothing of acme's, not even its type, its admin included.
    for (const caller of [mallory, globexAdmin]) {
      for (const id of [privateSession.id, publicSession.id, turnId, t.agentContextId, t.conversationContextId, endpointId, deliveryId]) {
        expect(await node(caller, id)).toBeNull();
      }
    }
  });

  it('nodes answers in the order asked, null where nothing is visible, repeats included, in one statement per type', async () => {
    t.statements.length = 0;
    const ids = [turnId, 'nope', privateSession.id, t.agentContextId, turnId];
    expect(await nodes(alice, ids)).toEqual([
      { __typename: 'AgentSessionTurn', id: turnId },
      null,
      { __typename: 'AgentSession', id: privateSession.id },
      { __typename: 'AgentContext', id: t.agentContextId },
      { __typename: 'AgentSessionTurn', id: turnId },
    ]);
    // Sessions, turns, and the two context tables (webhooks are not read for a member).
    expect(t.statements.filter((s) => /^\s*SELECT/i.test(s) && !/latest|event/i.test(s)).length).toBeLessThanOrEqual(4);
    expect(await nodes(mallory, ids)).toEqual([null, null, null, null, null]);
  });

  it('refuses more than 100 ids, and ill-formed ones, as bad input', async () => {
    const many = await t.gql(t.tokenOf(alice), NODES, { ids: Array.from({ length: 101 }, (_, i) => `id-${i}`) });
    expect(many.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const empty = await t.gql(t.tokenOf(alice), NODE, { id: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
}

describe('Relay node(id:) and nodes(ids:) on embedded SQLite', () => nodeSuite('sqlite'));
describeWithMysql('Relay node(id:) and nodes(ids:) on MySQL/MariaDB', () => nodeSuite('mysql'));

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describeWithMysql } from '../support/services';
import { alice, boss, EXECUTE_SETUP, startGateway, type TestGateway } from '../support/testkit';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const FAST_RETRIES = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_BASE_DELAY_MS: '50',
  WEBHOOK_RETRY_MAX_DELAY_MS: '200',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '2000',
};

const CREATE = `mutation C($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { id url events enabled description createdAt } } }`;
const ROTATE = `mutation R($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { id } } }`;
const UPDATE = `mutation U($id: ID!, $input: WebhookEndpointInput!, $enabled: Boolean) { updateWebhookEndpoint(id: $id, input: $input, enabled: $enabled) { id enabled url events } }`;
const DELETE = `mutation D($id: ID!) { deleteWebhookEndpoint(id: $id) }`;
const LIST = `{ webhookEndpoints { id url enabled disabledReason events } }`;
const DELIVERIES = `query Q($id: ID!, $first: Int, $after: String) { webhookDeliveries(endpointId: $id, first: $first, after: $after) {
  pageInfo { hasNextPage endCursor }
  edges { node { id webhookId eventType status nextAttemptAt sessionId turnId attempts { at statusCode durationMs error } } } } }`;
const REDELIVER = `mutation X($id: ID!) { redeliverWebhook(deliveryId: $id) { id status webhookId } }`;

interface Delivery {
  id: string;
  webhookId: string;
  eventType: string;
  status: string;
  nextAttemptAt: string | null;
  sessionId: string | null;
  turnId: string | null;
  attempts: { at: string; statusCode: number | null; durationMs: number; error: string | null }[];
}

function webhookSuite(database: 'sqlite' | 'mysql'): void {
  let h: TestGateway;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    h = await startGateway({ ...EXECUTE_SETUP, database, env: FAST_RETRIES });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.stop();
  });

  async function createEndpoint(url: string, events: string[], description: string | null = null): Promise<{ id: string; secret: string }> {
    const res = await h.gql<{ createWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(h.tokenOf(boss), CREATE, { input: { url, events, description } });
    expect(res.body.errors).toBeUndefined();
    const created = res.body.data!.createWebhookEndpoint;
    return { id: created.endpoint.id, secret: created.secret };
  }
  async function deliveries(endpointId: string): Promise<Delivery[]> {
    const res = await h.gql<{ webhookDeliveries: { edges: { node: Delivery }[] } }>(h.tokenOf(boss), DELIVERIES, { id: endpointId, first: 50 });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!.webhookDeliveries.edges.map((e) => e.node);
  }
  async function until<T>(what: string, read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const value = await read();
      if (holds(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const remove = (id: string) => h.gql(h.tokenOf(boss), DELETE, { id });

  it('lets only org admins manage endpoints, and shows the secret once', async () => {
    for (const [query, variables] of [
      [CREATE, { input: { url: receiver.url, events: ['TURN_COMPLETED'] } }],
      [LIST, {}],
      [ROTATE, { id: 'x' }],
      [DELIVERIES, { id: 'x' }],
    ] as const) {
      const res = await h.gql(h.tokenOf(alice), query, variables);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const { id, secret } = await createEndpoint(receiver.url, ['TURN_COMPLETED', 'SESSION_CREATED'], 'CI bot');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await h.gql<{ webhookEndpoints: Record<string, unknown>[] }>(h.tokenOf(boss), LIST);
    expect(listed.body.data!.webhookEndpoints).toContainEqual({ id, url: receiver.url, enabled: true, disabledReason: null, events: ['TURN_COMPLETED', 'SESSION_CREATED'] });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    // Another org's admin sees none of it.
    const other = await h.gql<{ webhookEndpoints: unknown[] }>(h.token({ userId: 'boss', orgId: 'globex', roles: ['admin'] }), LIST);
    expect(other.body.data!.webhookEndpoints).toEqual([]);
    await remove(id);
  });

  it('refuses bad endpoints and changes nothing', async () => {
    const bad = [
      [{ url: 'ftp://example.com/hook', events: ['TURN_COMPLETED'] }, 'BAD_USER_INPUT'],
      [{ url: 'http://example.com/hook', events: ['TURN_COMPLETED'] }, 'BAD_USER_INPUT'],
      [{ url: 'not a url', events: ['TURN_COMPLETED'] }, 'BAD_USER_INPUT'],
      [{ url: 'https://example.com/hook', events: [] }, 'BAD_USER_INPUT'],
      [{ url: 'https://example.com/hook', events: ['TURN_EXPLODED'] }, 'BAD_USER_INPUT'],
    ] as const;
    for (const [input, code] of bad) {
      const res = await h.gql(h.tokenOf(boss), CREATE, { input });
      expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
    }
    const listed = await h.gql<{ webhookEndpoints: unknown[] }>(h.tokenOf(boss), LIST);
    expect(listed.body.data!.webhookEndpoints).toEqual([]);
  });

  it('delivers a signed, verifiable body for a turn and a new session, with summaries and URLs but no payloads', async () => {
    const { id, secret } = await createEndpoint(receiver.url, ['TURN_COMPLETED', 'SESSION_CREATED']);
    receiver.secrets = [secret];
    const before = receiver.received.length;
    const run = await h.execute(alice, { instruction: 'Explain the webhook outbox in detail please', sessionName: 'hooks' });
    const { sessionId, turnId } = run.body.data!.execute;
    const got = await receiver.waitFor(2, (r) => r.payload?.data.sessionId === sessionId);
    expect(receiver.received.slice(before).every((r) => r.verified)).toBe(true);
    const completed = got.find((r) => r.payload?.type === 'TURN_COMPLETED')!;
    const created = got.find((r) => r.payload?.type === 'SESSION_CREATED')!;
    expect(created.payload!.data).toMatchObject({ orgId: 'acme', sessionId, turnId: null, status: null, session: { id: sessionId, name: 'hooks', ownerUser: { id: 'alice' } } });
    const turn = await h.turn(alice, sessionId, turnId);
    expect(completed.payload!.data).toMatchObject({ orgId: 'acme', sessionId, turnId, status: 'COMPLETED' });
    expect(completed.payload!.data.turn).toMatchObject({
      id: turnId,
      status: 'COMPLETED',
      instructionSummary: 'Explain the webhook outbox in detail please',
      agentAnswerSummary: turn.agentAnswerSummary,
      fullInstructionUrl: `/blobs/sessions/${sessionId}/turns/${turnId}/instruction.md`,
      fullAgentAnswerUrl: `/blobs/sessions/${sessionId}/turns/${turnId}/answer.md`,
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), estimatedCostUsd: expect.any(Number), isEstimated: expect.any(Boolean) },
    });
    expect(completed.body).not.toMatch(/"(input|output|instructions)":/);
    expect(completed.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(completed.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const listed = await until('both deliveries settled', () => deliveries(id), (ds) => ds.length === 2 && ds.every((d) => d.status === 'SUCCEEDED'));
    expect(listed.map((d) => d.eventType).sort()).toEqual(['SESSION_CREATED', 'TURN_COMPLETED']);
    expect(listed.find((d) => d.eventType === 'TURN_COMPLETED')).toMatchObject({ sessionId, turnId, nextAttemptAt: null, webhookId: completed.headers['webhook-id'] });
    expect(listed[0]!.attempts).toEqual([{ at: expect.any(String), statusCode: 204, durationMs: expect.any(Number), error: null }]);
    await remove(id);
  });

  it('delivers the events of an org that had no endpoint as soon as one is created here, and none once it is deleted', async () => {
    // The org's executes without endpoints: this instance learns it has none and writes no delivery.
    await h.execute(alice, { instruction: 'before any endpoint' });
    await h.execute(alice, { instruction: 'still none' });
    const { id, secret } = await createEndpoint(receiver.url, ['TURN_COMPLETED']);
    receiver.secrets = [secret];
    const { sessionId, turnId } = (await h.execute(alice, { instruction: 'right after the endpoint' })).body.data!.execute;
    const [got] = await receiver.waitFor(1, (r) => r.payload?.data.turnId === turnId);
    expect(got!.payload!.data).toMatchObject({ sessionId, turnId, status: 'COMPLETED' });
    await until('the delivery settled', () => deliveries(id), (ds) => ds.length === 1 && ds[0]!.status === 'SUCCEEDED');
    await remove(id);
    const after = receiver.received.length;
    await h.execute(alice, { instruction: 'after the delete' });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.length).toBe(after);
  });

  it('retries 5xx and 429 with the same webhook-id until the receiver accepts, honouring Retry-After', async () => {
    const { id, secret } = await createEndpoint(receiver.url, ['TURN_COMPLETED']);
    receiver.secrets = [secret];
    receiver.enqueue({ status: 500, body: 'database down' }, { status: 429, headers: { 'retry-after': '1' } }, { status: 503 });
    const before = receiver.received.length;
    const started = Date.now();
    const run = await h.execute(alice, { instruction: 'retry me' });
    const { turnId } = run.body.data!.execute;
    const got = await receiver.waitFor(4, (r) => r.payload?.data.turnId === turnId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(receiver.received.slice(before).every((r) => r.verified)).toBe(true);
    const [delivery] = await until('the delivery to succeed', () => deliveries(id), (ds) => ds[0]?.status === 'SUCCEEDED');
    expect(delivery!.attempts.map((a) => a.statusCode)).toEqual([500, 429, 503, 204]);
    expect(delivery!.attempts[0]!.error).toBe('HTTP 500: database down');
    await remove(id);
  });

  it('fails a delivery the receiver rejects, disables an endpoint on 410, and redelivers on request with the same webhook-id', async () => {
    const { id, secret } = await createEndpoint(receiver.url, ['TURN_COMPLETED']);
    receiver.secrets = [secret];
    receiver.enqueue({ status: 400 });
    const first = (await h.execute(alice, { instruction: 'rejected' })).body.data!.execute;
    const [failed] = await until('the delivery to fail', () => deliveries(id), (ds) => ds[0]?.status === 'FAILED');
    expect(failed!.attempts).toHaveLength(1);
    expect(failed!.nextAttemptAt).toBeNull();
    const redelivered = await h.gql<{ redeliverWebhook: { status: string; webhookId: string } }>(h.tokenOf(boss), REDELIVER, { id: failed!.id });
    expect(redelivered.body.data!.redeliverWebhook).toEqual({ id: failed!.id, status: 'PENDING', webhookId: failed!.webhookId });
    await until('the redelivery', () => deliveries(id), (ds) => ds[0]?.status === 'SUCCEEDED');
    const sent = receiver.received.filter((r) => r.payload?.data.turnId === first.turnId);
    expect(sent.map((r) => r.headers['webhook-id'])).toEqual([failed!.webhookId, failed!.webhookId]);
    expect((await h.gql(h.tokenOf(alice), REDELIVER, { id: failed!.id })).body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    receiver.enqueue({ status: 410 });
    await h.execute(alice, { instruction: 'gone' });
    await until('the endpoint to be disabled', async () => (await h.gql<{ webhookEndpoints: { id: string; enabled: boolean; disabledReason: string | null }[] }>(h.tokenOf(boss), LIST)).body.data!.webhookEndpoints.find((e) => e.id === id), (e) => e?.enabled === false);
    const count = receiver.received.length;
    await h.execute(alice, { instruction: 'nobody listens' });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.length).toBe(count);
    const reenabled = await h.gql<{ updateWebhookEndpoint: { enabled: boolean } }>(h.tokenOf(boss), UPDATE, { id, input: { url: receiver.url, events: ['TURN_COMPLETED'] }, enabled: true });
    expect(reenabled.body.data!.updateWebhookEndpoint.enabled).toBe(true);
    await remove(id);
  });

  it('signs with the old secret beside the new one after a rotation', async () => {
    const { id, secret: old } = await createEndpoint(receiver.url, ['TURN_COMPLETED']);
    const rotated = await h.gql<{ rotateWebhookSecret: { secret: string } }>(h.tokenOf(boss), ROTATE, { id });
    const fresh = rotated.body.data!.rotateWebhookSecret.secret;
    expect(fresh).not.toBe(old);
    receiver.secrets = [old];
    const run = (await h.execute(alice, { instruction: 'rotated' })).body.data!.execute;
    const [got] = await receiver.waitFor(1, (r) => r.body.includes(run.turnId));
    expect(got!.verified).toBe(true);
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    receiver.secrets = [fresh];
    const again = (await h.execute(alice, { instruction: 'rotated again' })).body.data!.execute;
    const [second] = await receiver.waitFor(1, (r) => r.body.includes(again.turnId));
    expect(second!.verified).toBe(true);
    // After the overlap only the new secret signs.
    h.clock.advance(24 * 3600 * 1000 + 1000);
    try {
      receiver.secrets = [old];
      const late = (await h.execute(alice, { instruction: 'after the overlap' })).body.data!.execute;
      const [third] = await receiver.waitFor(1, (r) => r.body.includes(late.turnId));
      expect(third!.verified).toBe(false);
      expect(String(third!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    } finally {
      h.clock.advance(-(24 * 3600 * 1000 + 1000));
    }
    await remove(id);
  });
}

describe('webhooks on embedded SQLite', () => webhookSuite('sqlite'));
describeWithMysql('webhooks on MySQL/MariaDB', () => webhookSuite('mysql'));

describe('webhooks pointed at private addresses', () => {
  let h: TestGateway;
  const resolved: string[] = [];

  beforeAll(async () => {
    h = await startGateway({
      ...EXECUTE_SETUP,
      env: { WEBHOOK_POLL_INTERVAL_MS: '50' },
      hooks: {
        // Test names resolve here, never through DNS.
        webhookResolve: async (hostname) => {
          resolved.push(hostname);
          if (hostname === 'hooks.internal.example') return [{ address: '10.0.0.1', family: 4 }];
          if (hostname === 'mixed.example') return [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }];
          throw Object.assign(new Error(`no such host ${hostname}`), { code: 'ENOTFOUND' });
        },
      },
    });
  });
  afterAll(() => h?.close());

  it('refuses loopback, metadata and private literals when the endpoint is created', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/hook', 'http://localhost:9/hook', 'https://10.1.2.3/', 'https://[::ffff:127.0.0.1]/']) {
      const res = await h.gql(h.tokenOf(boss), CREATE, { input: { url, events: ['TURN_COMPLETED'] } });
      expect([url, res.body.errors?.[0]?.extensions?.code]).toEqual([url, 'BAD_USER_INPUT']);
      expect(res.body.errors?.[0]?.message).toMatch(/private|loopback|link-local/);
    }
  });

  it('checks a host name at send time, after resolving it, and connects nowhere when it resolves to a private address', async () => {
    for (const host of ['hooks.internal.example', 'mixed.example']) {
      const created = await h.gql<{ createWebhookEndpoint: { endpoint: { id: string } } }>(h.tokenOf(boss), CREATE, {
        input: { url: `https://${host}/hook`, events: ['TURN_COMPLETED'] },
      });
      const id = created.body.data!.createWebhookEndpoint.endpoint.id;
      await h.execute(alice, { instruction: `to ${host}` });
      const deadline = Date.now() + 10_000;
      let delivery: Delivery | undefined;
      while (Date.now() < deadline) {
        const res = await h.gql<{ webhookDeliveries: { edges: { node: Delivery }[] } }>(h.tokenOf(boss), DELIVERIES, { id });
        delivery = res.body.data!.webhookDeliveries.edges[0]?.node;
        if (delivery?.status === 'FAILED') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(delivery?.status).toBe('FAILED');
      expect(delivery?.attempts).toHaveLength(1);
      expect(delivery?.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(new RegExp(`refused: ${host.replace('.', '\\.')} resolves to (10\\.0\\.0\\.1|169\\.254\\.169\\.254)`)) });
      expect(resolved).toContain(host);
      await h.gql(h.tokenOf(boss), DELETE, { id });
    }
  });
});

describe('webhook redirects', () => {
  let h: TestGateway;
  let redirecting: Server;
  let target: Server;
  let targetHits = 0;

  beforeAll(async () => {
    target = createServer((_req, res) => {
      targetHits++;
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const targetPort = (target.address() as AddressInfo).port;
    redirecting = createServer((_req, res) => res.writeHead(307, { location: `http://127.0.0.1:${targetPort}/internal` }).end());
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', r));
    h = await startGateway({ ...EXECUTE_SETUP, env: { ...FAST_RETRIES } });
  });
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => redirecting?.close(r));
    await new Promise((r) => target?.close(r));
  });

  it('does not follow a redirect to loopback (or anywhere): the attempt fails', async () => {
    const port = (redirecting.address() as AddressInfo).port;
    const created = await h.gql<{ createWebhookEndpoint: { endpoint: { id: string } } }>(h.tokenOf(boss), CREATE, {
      input: { url: `http://127.0.0.1:${port}/hook`, events: ['TURN_COMPLETED'] },
    });
    const id = created.body.data!.createWebhookEndpoint.endpoint.id;
    await h.execute(alice, { instruction: 'redirect me' });
    const deadline = Date.now() + 10_000;
    let delivery: Delivery | undefined;
    while (Date.now() < deadline && delivery?.status !== 'FAILED') {
      await new Promise((r) => setTimeout(r, 50));
      delivery = (await h.gql<{ webhookDeliveries: { edges: { node: Delivery }[] } }>(h.tokenOf(boss), DELIVERIES, { id })).body.data!.webhookDeliveries.edges[0]?.node;
    }
    expect(delivery?.attempts).toEqual([expect.objectContaining({ statusCode: 307, error: 'HTTP 307: redirects are not followed' })]);
    expect(targetHits).toBe(0);
  });
});

describe('a delivery committed by a gateway that stopped before sending it', () => {
  it('is sent by the next gateway on the same database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-hooks-crash-'));
    const receiver = await startWebhookReceiver();
    try {
      const first = await startGateway({ ...EXECUTE_SETUP, dataDir, env: FAST_RETRIES, hooks: { webhookSender: false } });
      const created = await first.gql<{ createWebhookEndpoint: { secret: string } }>(first.tokenOf(boss), CREATE, {
        input: { url: receiver.url, events: ['TURN_COMPLETED'] },
      });
      receiver.secrets = [created.body.data!.createWebhookEndpoint.secret];
      const { turnId } = (await first.execute(alice, { instruction: 'committed, never sent' })).body.data!.execute;
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toEqual([]);
      await first.close();
      const next = await startGateway({ ...EXECUTE_SETUP, dataDir, env: FAST_RETRIES });
      try {
        const [got] = await receiver.waitFor(1);
        expect(got!.verified).toBe(true);
        expect(got!.payload!.data.turnId).toBe(turnId);
      } finally {
        await next.close();
      }
    } finally {
      await receiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

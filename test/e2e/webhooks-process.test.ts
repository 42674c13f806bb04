import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/caller';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { postGraphQL, startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithMysql, describeWithRedis, redisUrl } from '../support/services';
import { alice, bob, boss } from '../support/testkit/users';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'e2e-webhooks-secret-e2e-webhooks-secret-0';
const tokenOf = (c: Caller) => issueToken({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, SECRET);

/** Short retries and a short lease (2 × 1 s + 5 s), so a dead sender's claim is taken over within the test. */
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_BASE_DELAY_MS: '100',
  WEBHOOK_RETRY_MAX_DELAY_MS: '400',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '1000',
};

describeWithRedis('webhooks from gateway processes', () => {
  describeWithMysql('sharing MySQL/MariaDB and Redis', () => {
    let env: Record<string, string>;
    let a: ServerProcess;
    let b: ServerProcess | null = null;
    let receiver: WebhookReceiver;
    let agentContextId: string;

    const gql = <T>(server: ServerProcess, caller: Caller, query: string, variables: Record<string, unknown> = {}) =>
      postGraphQL<T>(server.url, tokenOf(caller), query, variables);
    async function rest(server: ServerProcess, caller: Caller, instruction: string): Promise<{ sessionId: string; turnId: string }> {
      const res = await fetch(`${server.url}/api/ai/agent/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf(caller)}` },
        body: JSON.stringify({ agentContextId, instruction, clientKind: 'CLI' }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { sessionId: string; turnId: string };
    }
    // A fresh database's migrations take a while on a busy machine.
    const start = () => startServerProcess({ JWT_SECRET: SECRET, ...env, ...WEBHOOK_ENV }, 120_000);
    const delivered = (r: ReceivedWebhook) => r.verified && r.answered !== null && r.answered < 300;

    beforeAll(async () => {
      env = {
        DATABASE_URL: await createMysqlDatabase(),
        REDIS_URL: redisUrl!,
        REDIS_KEY_PREFIX: `e2e-hooks-${randomUUID()}:`,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-e2e-hooks-')),
      };
      // One after the other: the first runs the migrations.
      a = await start();
      b = await start();
      receiver = await startWebhookReceiver();
      agentContextId = (
        await gql<{ upsertAgentContext: { id: string } }>(a, boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }')
      ).upsertAgentContext.id;
      const created = await gql<{ createWebhookEndpoint: { secret: string } }>(a, boss, `mutation C($url: String!) {
        createWebhookEndpoint(input: { url: $url, events: [TURN_COMPLETED, SESSION_CREATED] }) { secret } }`, { url: receiver.url });
      receiver.secrets = [created.createWebhookEndpoint.secret];
    }, 300_000);

    afterAll(async () => {
      for (const server of [a, b]) if (server) await stopServerProcess(server.child);
      await receiver?.stop();
      if (env.DATABASE_URL) await dropMysqlDatabase(env.DATABASE_URL);
      if (env.DATA_DIR) rmSync(env.DATA_DIR, { recursive: true, force: true });
    });

    it('sends every event once from two instances, through a receiver that fails first and is restarted', async () => {
      receiver.enqueue({ status: 500 }, { status: 503 }, { status: 500 });
      const turns: { sessionId: string; turnId: string }[] = [];
      for (let i = 0; i < 6; i++) turns.push(await rest(i % 2 === 0 ? a : b!, i % 3 === 0 ? alice : bob, `question ${i}`));
      await receiver.stop();
      for (let i = 6; i < 10; i++) turns.push(await rest(i % 2 === 0 ? a : b!, alice, `while the receiver is down ${i}`));
      await new Promise((r) => setTimeout(r, 600));
      await receiver.start();
      const expected = turns.length * 2;
      const got = await receiver.waitFor(expected, delivered, 30_000);
      // Anything still due would show up now.
      await new Promise((r) => setTimeout(r, 1500));
      const byId = new Map<string, number>();
      for (const r of receiver.received.filter(delivered)) byId.set(String(r.headers['webhook-id']), (byId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      expect(byId.size).toBe(expected);
      expect([...byId.values()].every((n) => n === 1)).toBe(true);
      expect(receiver.received.every((r) => r.verified)).toBe(true);
      const completed = new Set(got.filter((r) => r.payload?.type === 'TURN_COMPLETED').map((r) => r.payload!.data.turnId));
      expect(completed).toEqual(new Set(turns.map((t) => t.turnId)));
      // The failed first attempts were retried under the same webhook-id.
      const failed = receiver.received.filter((r) => r.answered !== null && r.answered >= 500);
      expect(failed).toHaveLength(3);
      for (const f of failed) expect(byId.get(String(f.headers['webhook-id']))).toBe(1);
    }, 90_000);

    it('delivers, with the same webhook-id, what a gateway killed in mid-attempt had claimed, once another instance runs', async () => {
      await stopServerProcess(b!.child);
      b = null;
      receiver.enqueue({ hold: true });
      const before = receiver.received.length;
      const turn = await rest(a, alice, 'kill me while I am sending');
      // Whichever of the session's two events arrives first is held open: its attempt never ends.
      const [held] = await receiver.waitFor(1, (r) => r.payload?.data.sessionId === turn.sessionId && r.answered === null);
      const webhookId = String(held!.headers['webhook-id']);
      expect(receiver.received.length).toBeGreaterThan(before);
      a.child.kill('SIGKILL');
      await new Promise((r) => a.child.once('exit', r));
      receiver.release(204);
      a = await start();
      const again = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === webhookId && delivered(r), 30_000);
      expect(again[0]!.payload!.data.sessionId).toBe(turn.sessionId);
      const endpoints = await gql<{ webhookEndpoints: { id: string }[] }>(a, boss, '{ webhookEndpoints { id } }');
      const deliveries = await gql<{ webhookDeliveries: { edges: { node: { webhookId: string; status: string; attempts: { statusCode: number | null }[] } }[] } }>(
        a,
        boss,
        'query Q($id: ID!) { webhookDeliveries(endpointId: $id, first: 5) { edges { node { webhookId status attempts { statusCode } } } } }',
        { id: endpoints.webhookEndpoints[0]!.id },
      );
      const mine = deliveries.webhookDeliveries.edges.map((e) => e.node).find((d) => d.webhookId === webhookId);
      // The killed instance's attempt was never recorded; the one that took over recorded its own.
      expect(mine).toEqual({ webhookId, status: 'SUCCEEDED', attempts: [{ statusCode: 204 }] });
    }, 180_000);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/caller';
import { issueToken } from '../../src/server/auth';
import { launchBrowser, signInByPaste, type TestBrowser } from '../support/browser';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithBrowser } from '../support/services';
import { alice, boss } from '../support/testkit';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'e2e-dashboard-hooks-secret-e2e-dashboard-0';
const tokenOf = (c: Caller) => issueToken({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, SECRET);
const WAIT = { timeout: 20_000 };

describeWithBrowser('the webhooks page of the dashboard in Chromium', () => {
  let server: ServerProcess;
  let dataDir: string;
  let browser: TestBrowser;
  let receiver: WebhookReceiver;
  let endpointId: string;

  async function gql<T>(caller: Caller, query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf(caller)}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: T; errors?: unknown[] };
    if (!body.data) throw new Error(JSON.stringify(body.errors));
    return body.data;
  }
  const deliveryStatuses = async () =>
    (
      await gql<{ webhookDeliveries: { edges: { node: { id: string; status: string } }[] } }>(boss, 'query Q($id: ID!) { webhookDeliveries(endpointId: $id) { edges { node { id status } } } }', {
        id: endpointId,
      })
    ).webhookDeliveries.edges.map((e) => e.node);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-dashboard-hooks-'));
    receiver = await startWebhookReceiver();
    server = await startServerProcess({
      JWT_SECRET: SECRET,
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    });
    browser = await launchBrowser();
    const agentContextId = (await gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }'))
      .upsertAgentContext.id;
    const created = await gql<{ createWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(
      boss,
      'mutation C($url: String!) { createWebhookEndpoint(input: { url: $url, events: [TURN_COMPLETED], description: "CI bot" }) { secret endpoint { id } } }',
      { url: receiver.url },
    );
    receiver.secrets = [created.createWebhookEndpoint.secret];
    endpointId = created.createWebhookEndpoint.endpoint.id;
    // The receiver turns the first delivery down for good (400): it is FAILED until redelivered.
    receiver.enqueue({ status: 400, body: 'not today' });
    await gql(alice, 'mutation E($input: AgentExecuteInput!) { execute(input: $input) { __typename } }', { input: { agentContextId, instruction: 'Hello hooks' } });
    const deadline = Date.now() + WAIT.timeout;
    while ((await deliveryStatuses())[0]?.status !== 'FAILED') {
      if (Date.now() > deadline) throw new Error('the delivery did not fail');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServerProcess(server.child);
    await receiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the endpoints with their deliveries for an admin, and redelivers a failed one', async () => {
    const { page, problems } = await browser.open();
    await signInByPaste(page, `${server.url}/dashboard`, tokenOf(boss), WAIT);
    await page.locator('nav a[data-page="webhooks"]').click(WAIT);
    const card = page.locator(`[data-testid="webhook-endpoint"][data-endpoint-id="${endpointId}"]`);
    await card.waitFor(WAIT);
    expect(await card.locator('.endpoint-url').textContent()).toBe(receiver.url);
    expect(await card.textContent()).toContain('CI bot');
    expect(await card.locator('[data-testid="endpoint-state"]').textContent()).toBe('ENABLED');
    const row = card.locator('[data-testid="webhook-delivery"]').first();
    await row.waitFor(WAIT);
    expect(await row.locator('[data-testid="delivery-status"]').textContent()).toBe('FAILED');
    expect(await row.textContent()).toContain('400');
    expect(await row.textContent()).toContain('not today');
    const sent = receiver.received.length;
    await row.getByRole('button', { name: /^Redeliver TURN_COMPLETED/ }).click();
    await card.locator('[data-testid="webhook-delivery"] [data-testid="delivery-status"]', { hasText: 'PENDING' }).waitFor(WAIT);
    await receiver.waitFor(sent + 1);
    expect(receiver.received.at(-1)!.verified).toBe(true);
    expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    // After a reload the delivery shows what happened: succeeded on its second attempt.
    await page.reload();
    const again = page.locator(`[data-testid="webhook-endpoint"][data-endpoint-id="${endpointId}"] [data-testid="webhook-delivery"]`).first();
    await again.locator('[data-testid="delivery-status"]', { hasText: 'SUCCEEDED' }).waitFor(WAIT);
    expect(await again.locator('[data-testid="delivery-attempts"]').textContent()).toBe('2');
    expect(problems).toEqual([]);
  });

  it('offers the page to admins only', async () => {
    const { page, problems } = await browser.open();
    await signInByPaste(page, `${server.url}/dashboard`, tokenOf(alice), WAIT);
    await page.locator('nav a[data-page="usage"]').waitFor(WAIT);
    expect(await page.locator('nav a[data-page="webhooks"]').count()).toBe(0);
    await page.goto(`${server.url}/dashboard#/webhooks`);
    await page.locator('.notice', { hasText: 'organisation admins' }).waitFor(WAIT);
    expect(problems).toEqual([]);
  });
});

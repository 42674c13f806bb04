import { DASHBOARD_WAIT as WAIT, startDashboard, type DashboardFixture } from '../support/browser';
import { describeWithBrowser } from '../support/services';
import { alice, boss } from '../support/testkit';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

describeWithBrowser('the webhooks page of the dashboard in Chromium', () => {
  let dash: DashboardFixture;
  let receiver: WebhookReceiver;
  let endpointId: string;

  const deliveryStatuses = async () =>
    (
      await dash.gql<{ webhookDeliveries: { edges: { node: { id: string; status: string } }[] } }>(boss, 'query Q($id: ID!) { webhookDeliveries(endpointId: $id) { edges { node { id status } } } }', {
        id: endpointId,
      })
    ).webhookDeliveries.edges.map((e) => e.node);

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    dash = await startDashboard({
      name: 'dashboard-hooks',
      secret: 'e2e-dashboard-hooks-secret-e2e-dashboard-0',
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' },
    });
    const agentContextId = (await dash.gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }'))
      .upsertAgentContext.id;
    const created = await dash.gql<{ createWebhookEndpoint: { secret: string; endpoint: { id: string } } }>(
      boss,
      'mutation C($url: String!) { createWebhookEndpoint(input: { url: $url, events: [TURN_COMPLETED], description: "CI bot" }) { secret endpoint { id } } }',
      { url: receiver.url },
    );
    receiver.secrets = [created.createWebhookEndpoint.secret];
    endpointId = created.createWebhookEndpoint.endpoint.id;
    // The receiver turns the first delivery down for good (400): it is FAILED until redelivered.
    receiver.enqueue({ status: 400, body: 'not today' });
    await dash.gql(alice, 'mutation E($input: AgentExecuteInput!) { execute(input: $input) { __typename } }', { input: { agentContextId, instruction: 'Hello hooks' } });
    const deadline = Date.now() + WAIT.timeout;
    while ((await deliveryStatuses())[0]?.status !== 'FAILED') {
      if (Date.now() > deadline) throw new Error('the delivery did not fail');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await dash?.close();
    await receiver?.stop();
  });

  it('lists the endpoints with their deliveries for an admin, and redelivers a failed one', async () => {
    const { page, problems } = await dash.signIn(boss);
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
    const { page, problems } = await dash.signIn(alice);
    await page.locator('nav a[data-page="usage"]').waitFor(WAIT);
    expect(await page.locator('nav a[data-page="webhooks"]').count()).toBe(0);
    await page.goto(`${dash.server.url}/dashboard#/webhooks`);
    await page.locator('.notice', { hasText: 'organisation admins' }).waitFor(WAIT);
    expect(problems).toEqual([]);
  });
});

import { DASHBOARD_WAIT as WAIT, startDashboard, type DashboardFixture } from '../support/browser';
import { describeWithBrowser } from '../support/services';
import { alice, boss, EXECUTE } from '../support/testkit';

describeWithBrowser('fork lineage in the dashboard in Chromium', () => {
  let dash: DashboardFixture;
  let sessionId: string;
  const turnIds: string[] = [];

  beforeAll(async () => {
    dash = await startDashboard({ name: 'dashboard-forks', secret: 'e2e-dashboard-forks-secret-e2e-dashboard-0', openai: true });
    const agentContextId = (
      await dash.gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }')
    ).upsertAgentContext.id;
    for (const instruction of ['Plan the refactor', 'Now do it the long way']) {
      const { execute } = await dash.gql<{ execute: { sessionId: string; turnId: string } }>(alice, EXECUTE, {
        input: { agentContextId, instruction, ...(turnIds.length ? { sessionId } : { sessionName: 'Refactor plan' }) },
      });
      sessionId = execute.sessionId;
      turnIds.push(execute.turnId);
    }
  }, 60_000);

  afterAll(() => dash?.close());

  it('forks at a finished turn with "Fork here", opens the fork, and links fork and source both ways', async () => {
    const { page, problems } = await dash.signIn(alice);
    await page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    await page.goto(`${dash.server.url}/dashboard#/sessions/${sessionId}`);
    const firstTurn = page.locator(`[data-testid="turn-row"][data-turn-id="${turnIds[0]}"]`);
    await firstTurn.waitFor(WAIT);
    expect(await page.locator('[data-testid="fork-lineage"]').count()).toBe(0);
    await firstTurn.getByRole('button', { name: 'Fork here at turn 1' }).click();

    const forkedFrom = page.locator('[data-testid="forked-from"]');
    await forkedFrom.waitFor(WAIT);
    expect(await forkedFrom.textContent()).toMatch(/^Forked from Refactor plan at turn #1 · inherited \d+ tokens/);
    expect(await page.locator('h1').textContent()).toBe('Refactor plan (fork)');
    const copies = page.locator('[data-testid="turn-row"]');
    expect(await copies.count()).toBe(1);
    expect(await copies.first().textContent()).toContain('Plan the refactor');
    expect(await copies.first().locator('.usage').textContent()).toContain('inherited');
    const forkId = decodeURIComponent(new URL(page.url()).hash.replace('#/sessions/', ''));
    expect(forkId).not.toBe(sessionId);

    await forkedFrom.getByRole('link', { name: 'Refactor plan' }).click();
    const forks = page.locator('[data-testid="forks"]');
    await forks.waitFor(WAIT);
    expect(await forks.textContent()).toContain('Forks (1): Refactor plan (fork)');
    expect(await forks.locator(`a[data-fork-id="${forkId}"]`).count()).toBe(1);
    expect(await page.locator('[data-testid="turn-row"]').count()).toBe(2);
    expect(problems).toEqual([]);
  });
});

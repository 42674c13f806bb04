import { DASHBOARD_WAIT as WAIT, startDashboard, type DashboardFixture } from '../support/browser';
import { describeWithBrowser } from '../support/services';
import { alice, boss, EXECUTE } from '../support/testkit';

/** An answer a hostile page, or a model quoting one, might produce, with the Markdown a real answer has. */
const ANSWER = [
  'Use **retries** as follows:',
  '',
  '```ts',
  'const delay = Math.min(2 ** attempt * 100, 10_000);',
  '```',
  '',
  '- one [safe link](https://example.com/docs)',
  '- one [bad link](javascript:window.__pwned=1)',
  '',
  '<script>window.__pwned = 2</script>',
  '',
  'Inline <img src="x" onerror="window.__pwned = 3"> too.',
].join('\n');

describeWithBrowser('Markdown answers in the dashboard in Chromium', () => {
  let dash: DashboardFixture;
  let sessionId: string;
  let turnId: string;

  beforeAll(async () => {
    dash = await startDashboard({ name: 'dashboard-markdown', secret: 'e2e-dashboard-markdown-secret-e2e-dashb', openai: true });
    const agentContextId = (
      await dash.gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }')
    ).upsertAgentContext.id;
    dash.openai.enqueue({ kind: 'text', chunks: [ANSWER] });
    const { execute } = await dash.gql<{ execute: { sessionId: string; turnId: string } }>(alice, EXECUTE, {
      input: { agentContextId, instruction: 'How should **retries** back off? <b onmouseover="x()">hover</b>', sessionName: 'Markdown' },
    });
    ({ sessionId, turnId } = execute);
  }, 60_000);

  afterAll(() => dash?.close());

  it('renders code blocks, emphasis and safe links, and shows raw HTML as text that never runs', async () => {
    const { page, problems } = await dash.signIn(alice);
    await page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    await page.goto(`${dash.server.url}/dashboard#/sessions/${sessionId}`);
    const row = page.locator(`[data-testid="turn-row"][data-turn-id="${turnId}"]`);
    await row.waitFor(WAIT);
    const [instruction, answer] = [row.locator('.markdown').nth(0), row.locator('.markdown').nth(1)];

    // The fenced block is a code block, its text intact.
    expect(await answer.locator('pre > code').textContent()).toBe('const delay = Math.min(2 ** attempt * 100, 10_000);\n');
    expect(await answer.locator('strong').textContent()).toBe('retries');
    expect(await instruction.locator('strong').textContent()).toBe('retries');
    // Links open in a new tab without opener or referrer; a javascript: link keeps its text and loses its href.
    const safe = answer.getByRole('link', { name: 'safe link' });
    expect(await safe.getAttribute('href')).toBe('https://example.com/docs');
    expect(await safe.getAttribute('target')).toBe('_blank');
    expect(await safe.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(await answer.locator('a', { hasText: 'bad link' }).getAttribute('href')).toBeNull();
    // Raw HTML is shown as text: no element was made of it, nothing ran.
    expect(await answer.textContent()).toContain('<script>window.__pwned = 2</script>');
    expect(await answer.textContent()).toContain('<img src="x" onerror="window.__pwned = 3">');
    expect(await instruction.textContent()).toContain('<b onmouseover="x()">hover</b>');
    expect(await row.locator('script, img, [onerror], [onmouseover], b').count()).toBe(0);
    await answer.locator('a', { hasText: 'bad link' }).click();
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(problems).toEqual([]);
  });
});

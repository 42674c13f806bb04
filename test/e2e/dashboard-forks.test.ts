import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '../../src/domain/caller';
import { issueToken } from '../../src/server/auth';
import { launchBrowser, signInByPaste, type TestBrowser } from '../support/browser';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithBrowser } from '../support/services';
import { alice, boss, EXECUTE } from '../support/testkit';

const SECRET = 'e2e-dashboard-forks-secret-e2e-dashboard-0';
const tokenOf = (c: Caller) => issueToken({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, SECRET);
const WAIT = { timeout: 20_000 };

describeWithBrowser('fork lineage in the dashboard in Chromium', () => {
  let fake: FakeOpenAI;
  let server: ServerProcess;
  let dataDir: string;
  let browser: TestBrowser;
  let sessionId: string;
  const turnIds: string[] = [];

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

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-dashboard-forks-'));
    server = await startServerProcess({ JWT_SECRET: SECRET, DATA_DIR: dataDir, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.url });
    browser = await launchBrowser();
    const agentContextId = (
      await gql<{ upsertAgentContext: { id: string } }>(boss, 'mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }')
    ).upsertAgentContext.id;
    for (const instruction of ['Plan the refactor', 'Now do it the long way']) {
      const { execute } = await gql<{ execute: { sessionId: string; turnId: string } }>(alice, EXECUTE, {
        input: { agentContextId, instruction, ...(turnIds.length ? { sessionId } : { sessionName: 'Refactor plan' }) },
      });
      sessionId = execute.sessionId;
      turnIds.push(execute.turnId);
    }
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await stopServerProcess(server.child);
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('forks at a finished turn with "Fork here", opens the fork, and links fork and source both ways', async () => {
    const { page, problems } = await browser.open();
    await signInByPaste(page, `${server.url}/dashboard`, tokenOf(alice), WAIT);
    await page.locator('[data-testid="session-row"]').first().waitFor(WAIT);
    await page.goto(`${server.url}/dashboard#/sessions/${sessionId}`);
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

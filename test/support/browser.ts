import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Caller } from '../../src/domain/caller';
import { issueToken } from '../../src/server/auth';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai';
import { postGraphQL, startServerProcess, stopServerProcess, type ServerProcess } from './server-process';
import { chromiumPath } from './services';

/**
 * Without these Chromium tries to reach the internet (updates, sync, field trials) and
 * stalls where there is none; QUIC and the GPU are of no use headless.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  readonly context: BrowserContext;
  /** A new tab (its own sessionStorage) that records what would show up in the console. */
  open(viewport?: { width: number; height: number }): Promise<WatchedPage>;
  close(): Promise<void>;
  /** Closes the browser (Chromium writes its history out as it shuts down) and reads what its profile kept of the visits. */
  closeAndReadHistory(): Promise<BrowserHistory>;
}

/** What a closed Chromium profile remembers of where it went. */
export interface BrowserHistory {
  /** Every address in the History database (its `urls` table), as Chromium stored it. */
  readonly urls: readonly string[];
  /** Whether `text` occurs anywhere in the history files: the History database and its journal, and the session-restore files (Sessions/). */
  contains(text: string): boolean;
}

export interface WatchedPage {
  readonly page: Page;
  /** Console errors, uncaught exceptions and HTTP responses >= 400, as they happened. */
  readonly problems: string[];
}

/** Debian's Chromium, headless, with a fresh profile of its own. */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!chromiumPath) throw new Error('no Chromium (see test/support/services.ts)');
  const profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async open(viewport) {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
      page.on('response', (response) => {
        if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
      });
      return { page, problems };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
    async closeAndReadHistory() {
      await context.close();
      try {
        return readHistory(join(profile, 'Default'));
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

function readHistory(dir: string): BrowserHistory {
  const database = new Database(join(dir, 'History'), { readonly: true, fileMustExist: true });
  let urls: string[];
  try {
    urls = database.prepare<[], { url: string }>('SELECT url FROM urls ORDER BY id').all().map((row) => row.url);
  } finally {
    database.close();
  }
  const sessions = join(dir, 'Sessions');
  const files = [
    join(dir, 'History'),
    join(dir, 'History-journal'),
    ...(existsSync(sessions) ? readdirSync(sessions).map((name) => join(sessions, name)) : []),
  ].filter((file) => existsSync(file));
  const bytes = Buffer.concat(files.map((file) => readFileSync(file)));
  return { urls, contains: (text) => bytes.includes(text) || bytes.includes(Buffer.from(text, 'utf16le')) };
}

/** Opens the dashboard at `dashboardUrl` and signs in by pasting `token` into its form (the token never enters an address). */
export async function signInByPaste(page: Page, dashboardUrl: string, token: string, wait: { timeout: number }): Promise<void> {
  await page.goto(dashboardUrl);
  await page.locator('#token-input').waitFor(wait);
  await page.fill('#token-input', token);
  await page.click('form.sign-in button[type="submit"]');
}

/** How long the dashboard tests wait for a page to show something. */
export const DASHBOARD_WAIT = { timeout: 20_000 };

export interface DashboardOptions {
  /** Names the data directory (gw-e2e-<name>-...). */
  readonly name: string;
  /** JWT_SECRET, which signs tokenOf's tokens; without it the gateway accepts only the tokens `env` configures. */
  readonly secret?: string;
  /** Answers from a provider stand-in (OPENAI_BASE_URL) instead of the offline adapter. */
  readonly openai?: boolean;
  /** More of the server's environment (identity provider, webhooks, a fixed PORT). */
  readonly env?: Readonly<Record<string, string>>;
  /** False: the test launches the browsers it needs itself. */
  readonly browser?: boolean;
}

/** A built gateway process (`npm start`) with a data directory of its own, and a headless Chromium to look at its dashboard. */
export interface DashboardFixture {
  readonly server: ServerProcess;
  readonly browser: TestBrowser;
  /** The provider stand-in (with `openai: true`). */
  readonly openai: FakeOpenAI;
  /** A token for `caller`, signed with the fixture's secret. */
  tokenOf(caller: Caller): string;
  /** A GraphQL operation as `caller`; throws with the errors when no data came back. */
  gql<T>(caller: Caller, query: string, variables?: Record<string, unknown>): Promise<T>;
  /** A new tab of the fixture's browser, signed in as `caller` through the paste form (signInByPaste). */
  signIn(caller: Caller, viewport?: { width: number; height: number }): Promise<WatchedPage>;
  close(): Promise<void>;
}

/** Starts what a dashboard test needs; `close()` (in afterAll) stops all of it and removes the data directory. */
export async function startDashboard(options: DashboardOptions): Promise<DashboardFixture> {
  const { secret } = options;
  const dataDir = mkdtempSync(join(tmpdir(), `gw-e2e-${options.name}-`));
  let openai: FakeOpenAI | null = null;
  let server: ServerProcess | null = null;
  let browser: TestBrowser | null = null;
  const close = async () => {
    await browser?.close();
    if (server) await stopServerProcess(server.child);
    await openai?.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    openai = options.openai ? await startFakeOpenAI() : null;
    server = await startServerProcess({
      DATA_DIR: dataDir,
      ...(secret ? { JWT_SECRET: secret } : {}),
      ...(openai ? { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: openai.url } : {}),
      ...options.env,
    });
    browser = options.browser === false ? null : await launchBrowser();
  } catch (e) {
    await close();
    throw e;
  }
  const url = server.url;
  const tokenOf = (caller: Caller) => {
    if (!secret) throw new Error(`the ${options.name} fixture has no secret to sign tokens with`);
    return issueToken({ userId: caller.userId, userName: caller.userName, orgId: caller.orgId, orgName: caller.orgName, roles: [...caller.roles] }, secret);
  };
  const launched = browser;
  const provider = openai;
  const needBrowser = () => {
    if (!launched) throw new Error(`the ${options.name} fixture launched no browser`);
    return launched;
  };
  return {
    server,
    get browser() {
      return needBrowser();
    },
    get openai() {
      if (!provider) throw new Error(`the ${options.name} fixture started no provider stand-in (openai: true)`);
      return provider;
    },
    tokenOf,
    gql: (caller, query, variables) => postGraphQL(url, tokenOf(caller), query, variables),
    async signIn(caller, viewport) {
      const watched = await needBrowser().open(viewport);
      await signInByPaste(watched.page, `${url}/dashboard`, tokenOf(caller), DASHBOARD_WAIT);
      return watched;
    },
    close,
  };
}

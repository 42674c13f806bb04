import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
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

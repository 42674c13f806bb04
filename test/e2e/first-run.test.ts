import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { projectRoot, stopServerProcess } from '../support/server-process';

const run = promisify(execFile);

/** What a newcomer runs after `npm start`: seed (perhaps twice), token, and the start-up log. */
describe('a first run', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-first-run-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = () => ({ PATH: process.env.PATH ?? '', DATA_DIR: dataDir });

  it('seed twice seeds once: the second run says so and adds nothing', async () => {
    const args = ['dist/cli/seed.js', '--org', 'acme', '--users', '2', '--sessions', '5', '--turns', '1'];
    const first = await run(process.execPath, args, { cwd: projectRoot, env: env() });
    expect(first.stdout).toMatch(/^seeded org acme in sqlite in .*: 5 sessions, 5 turns/m);
    const second = await run(process.execPath, args, { cwd: projectRoot, env: env() });
    expect(second.stdout).toMatch(/^org acme already has 5 sessions: nothing seeded/m);
    const third = await run(process.execPath, [...args.slice(0, 2), 'globex', ...args.slice(3)], { cwd: projectRoot, env: env() });
    expect(third.stdout).toMatch(/^seeded org globex .*: 5 sessions/m);
  });

  it('token and seed do not rebuild a current build', async () => {
    const bundle = join(projectRoot, 'dist/web/dashboard.js');
    const before = statSync(bundle).mtimeMs;
    await run(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: projectRoot });
    expect(statSync(bundle).mtimeMs).toBe(before);
  });

  it('the start-up log line gives the dashboard URL and how to get a token', async () => {
    const child = spawn(process.execPath, ['dist/main.js'], {
      cwd: projectRoot,
      env: { ...env(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const line = await new Promise<Record<string, string>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no "gateway listening" line')), 20_000);
        createInterface({ input: child.stdout }).on('line', (text) => {
          const entry = JSON.parse(text) as Record<string, string>;
          if (entry['msg'] === 'gateway listening') {
            clearTimeout(timer);
            resolve(entry);
          }
        });
      });
      expect(line['dashboard']).toBe(line['url']!.replace(/\/graphql$/, '/dashboard'));
      expect(line['token']).toMatch(/^npm run --silent token -- --user <id> --org <id>/);
      expect((await fetch(line['dashboard']!)).status).toBe(200);
    } finally {
      await stopServerProcess(child);
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { projectRoot, startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';
import { describeWithMysql } from '../support/services';

const run = promisify(execFile);
const SECRET = 'e2e-secret-e2e-secret-e2e-secret-e2e-secret';

async function cli(script: string, args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, [`dist/cli/${script}.js`, ...args], {
    cwd: projectRoot,
    env: { ...process.env, JWT_SECRET: SECRET, ...env },
  });
  return stdout.trim();
}

function serverSuite(databaseEnv: () => Promise<Record<string, string>>, cleanup: (env: Record<string, string>) => Promise<void>) {
  let env: Record<string, string>;
  let server: ServerProcess;

  beforeAll(async () => {
    env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-e2e-')), ...(await databaseEnv()) };
    await cli('seed', ['--org', 'acme', '--users', '3', '--sessions', '12', '--turns', '2'], env);
    server = await startServerProcess({ JWT_SECRET: SECRET, ...env });
  }, 60_000);

  afterAll(async () => {
    if (server) expect(await stopServerProcess(server.child)).toBe(0);
    await cleanup(env);
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
  });

  it('is healthy and ready', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toMatchObject({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', blobs: 'ok', subscriptions: 'ok' } });
  });

  it('answers the README first query with a token from `npm run token`', async () => {
    const token = await cli('token', ['--user', 'user-2', '--org', 'acme'], env);
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        query: '{ me { user { text } } agentSessions(first: 3) { totalCount edges { node { name agentContextName ownerUser { text } } } } }',
      }),
    });
    const body = (await res.json()) as {
      data: { me: { user: { text: string } }; agentSessions: { totalCount: number; edges: { node: { agentContextName: string } }[] } };
    };
    expect(body.data.me.user.text).toBe('User 2');
    expect(body.data.agentSessions.totalCount).toBeGreaterThan(0);
    expect(body.data.agentSessions.edges).toHaveLength(3);
    expect(['Backend Platform', 'Design System']).toContain(body.data.agentSessions.edges[0]!.node.agentContextName);
  });

  it('refuses a request without a token with 401', async () => {
    const res = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { roles } }' }),
    });
    expect(res.status).toBe(401);
  });
}

describe('the built server on embedded SQLite', () =>
  serverSuite(
    async () => ({}),
    async () => undefined,
  ));

describeWithMysql('the built server on MySQL/MariaDB', () =>
  serverSuite(
    async () => ({ DATABASE_URL: await createMysqlDatabase() }),
    async (env) => dropMysqlDatabase(env.DATABASE_URL!),
  ));

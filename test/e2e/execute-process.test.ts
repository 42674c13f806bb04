import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueToken } from '../../src/server/auth';
import { createMysqlDatabase, dropMysqlDatabase } from '../support/db';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { postGraphQL as gql, startServerProcess } from '../support/server-process';
import { describeWithMysql } from '../support/services';
import { alice, boss, EXECUTE, EXECUTE_ASYNC, EXECUTE_SETUP, startGateway } from '../support/testkit';

const SECRET = 'e2e-execute-secret-e2e-execute-secret-0123';

const tokenOf = (c: typeof alice) => issueToken({ userId: c.userId, userName: c.userName, orgId: c.orgId, orgName: c.orgName, roles: [...c.roles] }, SECRET);
const AGENT = `mutation { upsertAgentContext(input: { name: "Backend", vectorCollection: "backend", defaultModel: "gpt-4.1-mini" }) { id } }`;

describe('npm start without OPENAI_API_KEY', () => {
  let dataDir: string;
  let server: { child: ChildProcess; url: string };
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-offline-'));
    server = await startServerProcess({ JWT_SECRET: SECRET, DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await new Promise((r) => {
      server.child.once('exit', r);
      server.child.kill('SIGTERM');
    });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs the whole pipeline offline: a labelled deterministic answer, a stored turn, blobs behind the gateway', async () => {
    const { upsertAgentContext } = await gql<{ upsertAgentContext: { id: string } }>(server.url, tokenOf(boss), AGENT);
    const input = { agentContextId: upsertAgentContext.id, instruction: 'Summarise the retry policy', activeFiles: [{ path: 'retry.ts', content: 'export const retries = 2;' }] };
    const { execute } = await gql<{ execute: { kind: string; sessionId: string; turnId: string; primaryOutputText: string } }>(server.url, tokenOf(alice), EXECUTE, { input });
    expect(execute.kind).toBe('FINAL');
    expect(execute.primaryOutputText).toContain('**Offline answer.**');
    expect(execute.primaryOutputText).toContain('export const retries = 2;');
    expect(execute.primaryOutputText).toContain('Summarise the retry policy');
    const again = await gql<{ execute: { primaryOutputText: string } }>(server.url, tokenOf(alice), EXECUTE, { input });
    expect(again.execute.primaryOutputText).toBe(execute.primaryOutputText);
    const res = await fetch(`${server.url}/blobs/sessions/${execute.sessionId}/turns/${execute.turnId}/answer.md`, { headers: { authorization: `Bearer ${tokenOf(alice)}` } });
    expect(await res.text()).toBe(execute.primaryOutputText);
  });
});

describeWithMysql('a gateway process that dies mid-turn', () => {
  let fake: FakeOpenAI;
  let databaseUrl: string;
  let dataDir: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    databaseUrl = await createMysqlDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-dead-'));
  });
  afterAll(async () => {
    await fake.close();
    await dropMysqlDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('has its PENDING turn marked FAILED ("interrupted") by a live instance once the lease runs out', async () => {
    const env = { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.url, TURN_LEASE_SECONDS: '2' };
    const doomed = await startServerProcess({ JWT_SECRET: SECRET, ...env });
    const { upsertAgentContext } = await gql<{ upsertAgentContext: { id: string } }>(doomed.url, tokenOf(boss), AGENT);
    fake.enqueue({ kind: 'hang' });
    const { executeAsync } = await gql<{ executeAsync: { sessionId: string; turnId: string } }>(doomed.url, tokenOf(alice), EXECUTE_ASYNC, {
      input: { agentContextId: upsertAgentContext.id, instruction: 'Never answered' },
    });
    await fake.waitForRequests(1);
    await new Promise((r) => {
      doomed.child.once('exit', r);
      doomed.child.kill('SIGKILL');
    });

    const survivor = await startGateway({
      ...EXECUTE_SETUP,
      database: { url: databaseUrl },
      dataDir,
      provider: fake,
      contexts: { agentContextId: upsertAgentContext.id, conversationContextId: '' },
      env: { TURN_LEASE_SECONDS: '2' },
    });
    try {
      expect((await survivor.turn(alice, executeAsync.sessionId, executeAsync.turnId)).status).toBe('PENDING');
      const failed = await survivor.waitForTurn(alice, executeAsync.sessionId, executeAsync.turnId);
      expect(failed).toMatchObject({ status: 'FAILED', errors: ['interrupted: the gateway instance running this turn stopped before it finished'] });
    } finally {
      await survivor.close();
    }
  }, 40_000);
});

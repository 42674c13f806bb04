import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { seedDemoData } from '../src/cli/seed-data';
import { loadConfig } from '../src/config';
import type { Caller } from '../src/domain/caller';
import { createLogger } from '../src/logger';
import { createGateway } from '../src/main';
import { issueToken } from '../src/server/auth';
import { fmt, runLoad } from './load';

/**
 * List-view throughput: `agentSessions(first: 50)` with context names, last turn and
 * participants over GraphQL, against a baseline in the same run: a bare node:http endpoint
 * that makes the same manager calls the loaders make and writes JSON (no GraphQL at all).
 *
 *   npm run bench:list                         # embedded SQLite
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npm run bench:list
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
const QUERY = `{ agentSessions(first: 50) { edges { node {
  id name lastTurnStatus turnCount agentContextName conversationContextName
  lastTurn { id status sequenceNumber } participants { id text }
} } } }`;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const mysqlBase = process.env.BENCH_MYSQL_URL;
  let databaseUrl: string | undefined;
  if (mysqlBase) {
    const name = `gw_bench_${process.pid}`;
    const conn = await createConnection({ uri: mysqlBase });
    await conn.query(`CREATE DATABASE ${name}`);
    await conn.end();
    const u = new URL(mysqlBase);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
  }
  let statements = 0;
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, JWT_SECRET: SECRET, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const gateway = await createGateway(config, createLogger('error'), { onQuery: () => statements++ });
  const url = await gateway.listen();
  const seedStarted = performance.now();
  await seedDemoData({ sessions: gateway.sessions.lifecycle, contexts: gateway.services.contexts }, { orgId: 'acme', orgName: 'Acme', users: 8, sessions: SESSIONS, turnsPerSession: 3, randomSeed: 1 });
  console.log(`seeded ${SESSIONS} sessions x 3 turns on ${gateway.db.dialect} in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

  const caller: Caller = { userId: 'user-2', userName: 'User 2', orgId: 'acme', orgName: 'Acme', roles: [] };
  const token = issueToken({ userId: caller.userId, userName: caller.userName, orgId: 'acme', orgName: 'Acme' }, SECRET);

  const baseline = createServer(async (_req, res) => {
    const { sessions, sessionBatches, contexts } = gateway.services;
    const page = await sessions.listSessions(caller, {}, 'LAST_UPDATED_DESC', { first: 50, after: null });
    const ids = page.items.map((s) => s.id);
    const [agents, convs, last, people] = await Promise.all([
      contexts.agentContextsByIds('acme', [...new Set(page.items.map((s) => s.agentContextId))]),
      contexts.conversationContextsByIds('acme', [...new Set(page.items.flatMap((s) => (s.conversationContextId ? [s.conversationContextId] : [])))]),
      sessionBatches.lastTurnsOf(caller, page.items),
      sessionBatches.participantsOf(caller, ids),
    ]);
    const body = page.items.map((s) => ({
      ...s,
      agentContextName: agents.find((a) => a.id === s.agentContextId)?.name ?? null,
      conversationContextName: convs.find((c) => c.id === s.conversationContextId)?.name ?? null,
      lastTurn: last.find((t) => t.sessionId === s.id) ?? null,
      participants: people.get(s.id),
    }));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: body }));
  });
  await new Promise<void>((r) => baseline.listen(0, '127.0.0.1', r));
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as AddressInfo).port}/`;

  const graphql = async () => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: QUERY }),
    });
    const body = (await res.json()) as { errors?: unknown };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
  };
  const raw = async () => {
    await (await fetch(baselineUrl)).json();
  };

  await runLoad(graphql, 4, 1);
  await runLoad(raw, 4, 1);
  statements = 0;
  await graphql();
  console.log(`SQL statements per GraphQL list request: ${statements}`);
  const rawResult = await runLoad(raw, CONCURRENCY, SECONDS);
  const gqlResult = await runLoad(graphql, CONCURRENCY, SECONDS);
  console.log(`baseline (manager calls + JSON, no GraphQL): ${fmt(rawResult)}`);
  console.log(`GraphQL agentSessions(first: 50):           ${fmt(gqlResult)}`);
  console.log(`GraphQL / baseline throughput: ${(gqlResult.perSecond / rawResult.perSecond).toFixed(2)}x`);

  baseline.close();
  await gateway.close();
  if (databaseUrl) {
    const conn = await createConnection({ uri: mysqlBase! });
    await conn.query(`DROP DATABASE ${new URL(databaseUrl).pathname.slice(1)}`);
    await conn.end();
  }
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

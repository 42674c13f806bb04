import 'reflect-metadata';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { seedDemoData } from '../src/cli/seed-data';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createGateway } from '../src/main';
import { statementsOf } from '../src/persistence/mysql-sql';
import { issueToken } from '../src/server/auth';
import { BENCH_SECRET, gatewayEnv, startChild, type BenchChild } from './bench-child';
import { createBenchDatabase } from './bench-database';
import { summaryTableDdl } from './list-summary';
import { fmt, sampleLoad, summarise, type LoadResult, type LoadSample } from './load';

/**
 * The session list view, `agentSessions(first: 25)` with the summary fields, the owner and
 * totalCount, served by the gateway (its own process, NODE_ENV=production, as `npm start`
 * runs it) against a baseline measured in the same run: a hand-written node:http endpoint in
 * a process of its own (bench/list-baseline.ts) that checks the same JWT and reads the same
 * page from a denormalised summary table in the same database with two statements (mysql2 on
 * MySQL; better-sqlite3 read-only on the gateway's SQLite file). Both answer the same JSON,
 * checked equal for every seeded member before anything is timed. Load runs in interleaved
 * rounds (gateway, baseline, baseline, gateway, ...) so the machine's noise hits both.
 *
 *   npm run bench:list                                                  # embedded SQLite
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npm run bench:list   # MySQL/MariaDB, then SQLite
 *
 * BENCH_SESSIONS (2000), BENCH_CONCURRENCY (20 connections), BENCH_ROUNDS (6), BENCH_SECONDS
 * (3 per round and side), BENCH_POOL_SIZE (10: DB_POOL_SIZE of the gateway, the baseline's pool).
 * BENCH_PROFILE_DIR: the gateway child writes a V8 CPU profile there (--cpu-prof) when it exits.
 */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 2000);
const USERS = 8;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const POOL_SIZE = process.env.BENCH_POOL_SIZE ?? '10';
const PAGE_SIZE = 25;
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
/** Requests sent one at a time while the children record their SQL. */
const COUNTED_REQUESTS = 20;
const QUERY = `query SessionSummaries { agentSessions(first: ${PAGE_SIZE}) {
  totalCount pageInfo { hasNextPage }
  edges { node { id name agentContextName conversationContextName lastTurnStatus lastTurnDate turnCount ownerUser { id text } } }
} }`;
const BODY = JSON.stringify({ query: QUERY });
const MEMBER = 'user-2';
const tokenOf = (userId: string) => issueToken({ userId, userName: `User ${userId.slice(5)}`, orgId: 'acme', orgName: 'Acme' }, BENCH_SECRET);

type Kind = 'mysql' | 'sqlite';

interface Side {
  readonly name: string;
  readonly child: BenchChild;
  readonly post: (token: string) => Promise<PageAnswer>;
  readonly samples: LoadSample[];
  readonly log: string;
  /** Requests answered correctly so far, warm-up included. */
  served: number;
}

interface PageAnswer {
  readonly data?: { agentSessions?: { edges?: unknown[] } };
  readonly errors?: unknown;
}

interface DialectResult {
  readonly kind: Kind;
  readonly gateway: LoadResult;
  readonly baseline: LoadResult;
  readonly rss: { readonly gateway: number; readonly baseline: number };
}

/**
 * POST the list query over keep-alive connections; a non-200 answer or a GraphQL error fails
 * the run. Between its rounds a side idles for two of the other's (6 s), past node:http's
 * 5 s keep-alive timeout: a request written on a socket the server is closing just then
 * is resent once on a fresh one, as Node's documentation advises (`reusedSocket`).
 */
function poster(base: string): (token: string) => Promise<PageAnswer> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const { hostname, port } = new URL(base);
  const post = (token: string, retried: boolean): Promise<PageAnswer> =>
    new Promise((done, fail) => {
      const req = request(
        {
          agent,
          hostname,
          port,
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY), authorization: `Bearer ${token}` },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const body = JSON.parse(text) as PageAnswer;
            if (res.statusCode !== 200 || body.errors || body.data?.agentSessions?.edges?.length !== PAGE_SIZE) {
              fail(new Error(`${base} answered ${res.statusCode}: ${text.slice(0, 300)}`));
            } else {
              done(body);
            }
          });
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (!retried && req.reusedSocket && e.code === 'ECONNRESET') post(token, true).then(done, fail);
        else fail(e);
      });
      req.end(BODY);
    });
  return (token) => post(token, false);
}

async function seed(kind: Kind, databaseUrl: string | null, dataDir: string): Promise<void> {
  const started = performance.now();
  const config = loadConfig({ DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const gateway = await createGateway(config, createLogger('error'), { sweeper: false, webhookSender: false });
  try {
    // Through the session manager (every invariant holds), eight sessions at a time.
    await seedDemoData({ sessions: gateway.sessions.lifecycle, contexts: gateway.services.contexts }, { orgId: 'acme', orgName: 'Acme', users: USERS, sessions: SESSIONS, turnsPerSession: 3, randomSeed: 1 });
  } finally {
    await gateway.close();
  }
  const seeded = performance.now();
  if (kind === 'mysql') {
    const conn = await createConnection({ uri: databaseUrl as string });
    for (const sql of summaryTableDdl('mysql')) await conn.query(sql);
    await conn.end();
  } else {
    const file = new Database(join(dataDir, 'gateway.sqlite'));
    for (const sql of summaryTableDdl('sqlite')) file.exec(sql);
    file.close();
  }
  console.log(
    `  seeded ${SESSIONS} sessions x 3 turns, ${USERS} users, in ${((seeded - started) / 1000).toFixed(1)} s; ` +
      `summary table built in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
  );
}

/** Both sides must give every member the same page (ids, order, every field) and the same totals. */
async function verify(gateway: Side, baseline: Side): Promise<void> {
  for (let u = 2; u <= USERS; u++) {
    const token = tokenOf(`user-${u}`);
    const [g, b] = await Promise.all([gateway.post(token), baseline.post(token)]);
    if (!isDeepStrictEqual(g.data, b.data)) {
      throw new Error(`user-${u}: the baseline's page differs from the gateway's\n gateway:  ${JSON.stringify(g.data).slice(0, 600)}\n baseline: ${JSON.stringify(b.data).slice(0, 600)}`);
    }
  }
  console.log(`  verified: both give each of the ${USERS - 1} members the same ${PAGE_SIZE} sessions, fields and totalCount`);
}

/**
 * Statements per request, from what the child ran during COUNTED_REQUESTS sequential requests,
 * and the calls they took: the gateway sends reads asked for together to MySQL as one
 * multi-statement query (ReadBatcher).
 */
async function statementsPerRequest(side: Side, token: string): Promise<string> {
  const calls = await side.child.statementsDuring(async () => {
    for (let i = 0; i < COUNTED_REQUESTS; i++) await side.post(token);
  });
  const byText = new Map<string, number>();
  for (const sql of calls) byText.set(sql, (byText.get(sql) ?? 0) + 1);
  // A call every request made shows up COUNTED_REQUESTS times (or a multiple); background
  // work (lease sweeper, event pruning) that happened to run meanwhile shows up less often.
  const perRequest = [...byText].filter(([, n]) => n >= COUNTED_REQUESTS);
  const callCount = perRequest.reduce((sum, [, n]) => sum + n, 0);
  const statements = perRequest.flatMap(([sql, n]) => statementsOf(sql).map((one) => [one, n] as const));
  const count = statements.reduce((sum, [, n]) => sum + n, 0) / COUNTED_REQUESTS;
  const tables = statements.map(([sql]) => /\bFROM\s+[`"]?(\w+)/i.exec(sql)?.[1] ?? sql.slice(0, 20));
  const background = calls.length - callCount;
  return (
    `${count} in ${callCount / COUNTED_REQUESTS} call${callCount === COUNTED_REQUESTS ? '' : 's'} (${tables.join(', ')})` +
    (background ? `, plus ${background} background during the count` : '')
  );
}

/** A run of load on one side; any failed request ends the bench for this database, saying why. */
async function load(side: Side, token: string, seconds: number): Promise<LoadSample> {
  let failed = 0;
  let first = '';
  const sample = await sampleLoad(
    async () => {
      try {
        await side.post(token);
        side.served++;
      } catch (e) {
        if (failed++ === 0) first = (e as Error).message;
      }
    },
    CONCURRENCY,
    seconds,
  );
  if (failed > 0) {
    const logged = firstLoggedError(side.log);
    throw new Error(
      `the ${side.name} failed ${failed} requests after answering ${side.served} under load; first: ${first}` +
        `${logged ? `\n  its log's first error: ${logged}` : ''}`,
    );
  }
  return sample;
}

/** The message of the first error-level entry of a pino log. */
function firstLoggedError(file: string): string | null {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
    if ((entry.level ?? 0) >= 50) return `${entry.msg ?? ''}: ${entry.err?.message ?? ''}`;
  }
  return null;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');

async function benchOn(kind: Kind): Promise<DialectResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-list-'));
  const database = kind === 'mysql' ? await createBenchDatabase(process.env.BENCH_MYSQL_URL as string, 'gw_bench_list') : null;
  console.log(`\n${kind === 'mysql' ? 'MySQL/MariaDB' : 'embedded SQLite'}:`);
  const children: BenchChild[] = [];
  try {
    await seed(kind, database?.url ?? null, dataDir);
    const gatewayChild = await startChild(
      resolve(__dirname, 'list-gateway.js'),
      gatewayEnv(dataDir, POOL_SIZE, database?.url ?? null),
      join(dataDir, 'gateway.log'),
      PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${resolve(PROFILE_DIR)}`] : [],
    );
    children.push(gatewayChild);
    const baselineChild = await startChild(
      resolve(__dirname, 'list-baseline.js'),
      {
        NODE_ENV: 'production',
        JWT_SECRET: BENCH_SECRET,
        BENCH_PAGE_SIZE: String(PAGE_SIZE),
        BENCH_POOL_SIZE: POOL_SIZE,
        ...(database ? { BENCH_MYSQL_URL: database.url } : { BENCH_SQLITE_FILE: join(dataDir, 'gateway.sqlite') }),
      },
      join(dataDir, 'baseline.log'),
    );
    children.push(baselineChild);
    const side = (name: string, child: BenchChild): Side => ({ name, child, post: poster(child.url), samples: [], log: join(dataDir, `${name}.log`), served: 0 });
    const gateway = side('gateway', gatewayChild);
    const baseline = side('baseline', baselineChild);

    await verify(gateway, baseline);
    const token = tokenOf(MEMBER);
    for (const side of [gateway, baseline]) await load(side, token, 2);
    const gatewayStatements = await statementsPerRequest(gateway, token);
    const baselineStatements = await statementsPerRequest(baseline, token);
    const idle = { gateway: gatewayChild.rssBytes(), baseline: baselineChild.rssBytes() };

    console.log(`  ${ROUNDS} interleaved rounds of ${SECONDS} s per side, ${CONCURRENCY} connections, as ${MEMBER} (a member); load average ${loadAverage()}`);
    const roundRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [gateway, baseline] : [baseline, gateway];
      for (const side of order) side.samples.push(await load(side, token, SECONDS));
      const [g, b] = [gateway, baseline].map((s) => summarise([s.samples[round] as LoadSample]));
      roundRatios.push((g as LoadResult).perSecond / (b as LoadResult).perSecond);
    }
    const after = { gateway: gatewayChild.rssBytes(), baseline: baselineChild.rssBytes() };
    const g = summarise(gateway.samples);
    const b = summarise(baseline.samples);
    console.log(`  baseline (node:http + ${kind === 'mysql' ? 'mysql2' : 'better-sqlite3'}, summary table): ${fmt(b)}`);
    console.log(`  gateway  (GraphQL, NODE_ENV=production):          ${fmt(g)}`);
    console.log(`  SQL statements per request: gateway ${gatewayStatements}; baseline ${baselineStatements}`);
    console.log(`  RSS after the load: gateway ${mb(after.gateway)} (${mb(idle.gateway)} before), baseline ${mb(after.baseline)} (${mb(idle.baseline)} before)`);
    console.log(`  per-round gateway/baseline: ${roundRatios.map((r) => r.toFixed(2)).join(' ')}; load average ${loadAverage()}`);
    console.log(`  gateway/baseline throughput: ${(g.perSecond / b.perSecond).toFixed(2)}x`);
    return { kind, gateway: g, baseline: b, rss: after };
  } finally {
    for (const child of children) await child.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}; agentSessions(first: ${PAGE_SIZE}) with summary fields, owner and totalCount; load average ${loadAverage()}`);
  const results: (DialectResult | { kind: Kind; failure: string })[] = [];
  for (const kind of [...(process.env.BENCH_MYSQL_URL ? (['mysql'] as const) : []), 'sqlite' as const]) {
    try {
      results.push(await benchOn(kind));
    } catch (e) {
      console.log(`  FAILED: ${(e as Error).message}`);
      results.push({ kind, failure: (e as Error).message.split('\n')[0] as string });
    }
  }
  console.log(`\nsummary (gateway vs baseline, same run; load average ${loadAverage()}):`);
  for (const r of results) {
    if ('failure' in r) {
      console.log(`  ${r.kind.padEnd(6)} failed: ${r.failure}`);
      process.exitCode = 1;
      continue;
    }
    console.log(
      `  ${r.kind.padEnd(6)} ${r.gateway.perSecond.toFixed(0)} vs ${r.baseline.perSecond.toFixed(0)} req/s = ${(r.gateway.perSecond / r.baseline.perSecond).toFixed(2)}x; ` +
        `p50 ${r.gateway.p50Ms.toFixed(1)} vs ${r.baseline.p50Ms.toFixed(1)} ms; p99 ${r.gateway.p99Ms.toFixed(1)} vs ${r.baseline.p99Ms.toFixed(1)} ms; ` +
        `RSS after the load ${mb(r.rss.gateway)} vs ${mb(r.rss.baseline)}`,
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

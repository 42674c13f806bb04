import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { RARE_WORD } from '../src/cli/bulk-seed';
import type { Caller } from '../src/domain/caller';
import { encodeCursor } from '../src/domain/pagination';
import type { SessionFilter } from '../src/domain/session';
import { issueToken } from '../src/server/auth';
import { readList } from '../src/sessions/session-list';
import { statementCosts } from '../test/support/statement-costs';
import { BENCH_SECRET, gatewayEnv, startChild } from './bench-child';
import { createBenchDatabase } from './bench-database';

/**
 * Issue 35's table: what one dashboard request costs as an org's history grows. For each size
 * (BENCH_SCALE_SIZES; default 1,000 and 1,000,000 sessions on MySQL/MariaDB, 1,000 and
 * 200,000 on the embedded SQLite) it seeds org acme (1,000 users, 2–3 participants, 35%
 * public, 1% deleted, a year of history; `npm run seed`) and a second org a tenth its size,
 * starts the gateway in its own process, and sends each query of the table BENCH_REQUESTS (30)
 * times one after another: p50/p99 per size, the growth factor, and what the statements read
 * (MySQL: index and row reads of the page and count statements, run on a connection of the
 * bench's own; SQLite: the plan).
 *
 *   npm run bench:scale                                                    # embedded SQLite
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npm run bench:scale     # MySQL/MariaDB
 *
 * BENCH_SCALE_REUSE=<name> seeds into database <name>_<size> (or the data directory
 * <tmpdir>/<name>-<size>) and keeps it: the next run with the same name finds the orgs seeded
 * (the seed adds only what is missing) and starts measuring minutes sooner. BENCH_SCALE_ONLY
 * (a case-insensitive part of a query's name) measures those queries alone.
 */
const MYSQL = process.env.BENCH_MYSQL_URL ?? null;
const SIZES = (process.env.BENCH_SCALE_SIZES ?? (MYSQL ? '1000,1000000' : '1000,200000')).split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 30);
const REUSE = process.env.BENCH_SCALE_REUSE ?? null;
const ONLY = process.env.BENCH_SCALE_ONLY?.toLowerCase() ?? null;
const ROOT = resolve(__dirname, '..', '..');
const SEED_CLI = join(__dirname, '..', 'src', 'cli', 'seed.js');

const caller = (userId: string, roles: string[] = []): Caller => ({ userId, userName: `User ${userId.slice(5)}`, orgId: 'acme', orgName: 'Acme', roles });
const ADMIN = caller('user-1', ['admin']);
const MEMBER = caller('user-2');

interface Query {
  readonly name: string;
  readonly who: Caller;
  readonly filter: SessionFilter;
  readonly count: boolean;
  /** Rows to skip (a cursor there), capped by the org's size. */
  readonly depth?: number;
}

const QUERIES: readonly Query[] = [
  { name: 'admin, first page, no totalCount', who: ADMIN, filter: {}, count: false },
  { name: 'admin, first page + totalCount', who: ADMIN, filter: {}, count: true },
  { name: 'member (user-2), first page + totalCount', who: MEMBER, filter: {}, count: true },
  { name: 'admin, page after row 10,000 (no count)', who: ADMIN, filter: {}, count: false, depth: 10_000 },
  { name: 'admin, page after row 100,000 (no count)', who: ADMIN, filter: {}, count: false, depth: 100_000 },
  { name: 'lastTurnStatus filter + totalCount', who: ADMIN, filter: { lastTurnStatus: 'COMPLETED' }, count: true },
  { name: 'ownerUserId filter + totalCount', who: ADMIN, filter: { ownerUserId: 'user-3' }, count: true },
  { name: 'participantId filter + totalCount', who: ADMIN, filter: { participantId: 'user-4' }, count: true },
  { name: 'updatedAfter 7 days + totalCount', who: ADMIN, filter: { updatedAfter: new Date(Date.now() - 7 * 24 * 3600 * 1000) }, count: true },
  { name: 'search "rate limiter" + totalCount', who: MEMBER, filter: { search: 'rate limiter' }, count: true },
  { name: `search for a rare word ("${RARE_WORD}") + totalCount`, who: MEMBER, filter: { search: RARE_WORD }, count: true },
  { name: 'admin, search "rate limiter" + totalCount', who: ADMIN, filter: { search: 'rate limiter' }, count: true },
  { name: `admin, search for a rare word ("${RARE_WORD}") + totalCount`, who: ADMIN, filter: { search: RARE_WORD }, count: true },
  // Session numbers starting 123: a thousand in a million, most of them created within a day.
  { name: 'admin, search "123" + totalCount', who: ADMIN, filter: { search: '123' }, count: true },
];

const DOCUMENT = `query Scale($filter: AgentSessionFilter, $after: String, $count: Boolean!) {
  agentSessions(filter: $filter, first: 25, after: $after) {
    totalCount @include(if: $count) totalCountIsLowerBound @include(if: $count)
    pageInfo { hasNextPage endCursor }
    edges { node { id name lastTurnStatus lastUpdatedDate turnCount ownerUser { id text } } }
  }
}`;

interface Measured {
  readonly p50: number;
  readonly p99: number;
  readonly rows: string;
}

async function main(): Promise<void> {
  const results = new Map<number, Map<string, Measured>>();
  for (const size of SIZES) results.set(size, await measureSize(size));
  const [small, large] = [SIZES[0] as number, SIZES.at(-1) as number];
  console.log(`\n${MYSQL ? 'MySQL/MariaDB' : 'embedded SQLite'}: ${REQUESTS} sequential requests per query, p50 / p99 in ms (noisy: shared machine)\n`);
  console.log(`| query | ${small.toLocaleString('en-US')} sessions | ${large.toLocaleString('en-US')} sessions | p99 growth | read at ${large.toLocaleString('en-US')} |`);
  console.log('|---|---|---|---|---|');
  for (const q of QUERIES) {
    const a = results.get(small)?.get(q.name);
    const b = results.get(large)?.get(q.name);
    if (!a || !b) continue;
    console.log(`| ${q.name} | ${a.p50.toFixed(0)} / ${a.p99.toFixed(0)} | ${b.p50.toFixed(0)} / ${b.p99.toFixed(0)} | ${(b.p99 / Math.max(a.p99, 1)).toFixed(1)}x | ${b.rows} |`);
  }
}

async function measureSize(size: number): Promise<Map<string, Measured>> {
  const dataDir = REUSE ? join(tmpdir(), `${REUSE}-${size}`) : mkdtempSync(join(tmpdir(), 'bench-scale-'));
  if (REUSE) mkdirSync(dataDir, { recursive: true });
  const database = MYSQL ? await (REUSE ? keptDatabase(MYSQL, `${REUSE}_${size}`) : createBenchDatabase(MYSQL, 'scale')) : null;
  const url = database?.url ?? null;
  const out = new Map<string, Measured>();
  try {
    const env = { ...process.env, DATA_DIR: dataDir, ...(url ? { DATABASE_URL: url } : {}) };
    const seeded = performance.now();
    const seed = (org: string, sessions: number) =>
      execFileSync(process.execPath, [SEED_CLI, '--org', org, '--users', '1000', '--sessions', String(sessions), '--turns-for-newest', '200', '--turns', '2'], { env, stdio: ['ignore', 'inherit', 'inherit'], cwd: ROOT });
    seed('acme', size);
    seed('globex', Math.max(200, Math.round(size / 10)));
    console.log(`${size} sessions (+ ${Math.round(size / 10)} in a second org) seeded in ${((performance.now() - seeded) / 1000).toFixed(0)} s`);
    const child = await startChild(join(__dirname, 'list-gateway.js'), gatewayEnv(dataDir, '10', url), join(dataDir, 'gateway.log'));
    try {
      for (const q of QUERIES.filter((x) => ONLY === null || x.name.toLowerCase().includes(ONLY))) {
        const after = q.depth === undefined ? null : await cursorAt(url, dataDir, Math.min(q.depth, size - 100));
        const token = issueToken(q.who, BENCH_SECRET);
        const body = JSON.stringify({ query: DOCUMENT, variables: { filter: q.filter, after, count: q.count } });
        const post = async () => {
          const res = await fetch(`${child.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
          const json = (await res.json()) as { errors?: unknown };
          if (json.errors) throw new Error(`${q.name}: ${JSON.stringify(json.errors).slice(0, 300)}`);
        };
        const times: number[] = [];
        try {
          for (let i = 0; i < 3; i++) await post();
          for (let i = 0; i < REQUESTS; i++) {
            const t0 = performance.now();
            await post();
            times.push(performance.now() - t0);
          }
        } catch (e) {
          // A query that fails (e.g. at the statement deadline) is reported, and the run goes on.
          console.log(`  ${size}: ${q.name}: FAILED after ${times.length} requests: ${(e as Error).message.slice(0, 200)}`);
          out.set(q.name, { p50: NaN, p99: NaN, rows: 'failed' });
          continue;
        }
        times.sort((a, b) => a - b);
        const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0;
        // The statements the gateway runs for the request, each decision taken on the rows they answer.
        const rows = await readsOf(url, dataDir, q, after);
        out.set(q.name, { p50: at(0.5), p99: at(0.99), rows });
        console.log(`  ${size}: ${q.name}: p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms; ${rows}`);
      }
    } finally {
      await child.close();
    }
  } finally {
    if (process.env.BENCH_KEEP !== '1' && REUSE === null) {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return out;
}

/** Database `name` on the server, created when missing and never dropped (BENCH_SCALE_REUSE). */
async function keptDatabase(base: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!/^\w+$/.test(name)) throw new Error(`BENCH_SCALE_REUSE: ${name} is not a plain database name`);
  const conn = await createConnection({ uri: base });
  await conn.query(`CREATE DATABASE IF NOT EXISTS ${name}`);
  await conn.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => Promise.resolve() };
}

/** The admin list's cursor after `depth` rows, read straight from the table. */
async function cursorAt(url: string | null, dataDir: string, depth: number): Promise<string> {
  const sql = `SELECT id, last_updated_date AS d FROM agent_sessions WHERE org_id = 'acme' AND is_deleted = 0 ORDER BY last_updated_date DESC, id DESC LIMIT 1 OFFSET ${depth - 1}`;
  let row: { id: string; d: Date | string } | undefined;
  if (url) {
    const conn = await createConnection({ uri: url, timezone: 'Z' });
    row = ((await conn.query(sql))[0] as { id: string; d: Date }[])[0];
    await conn.end();
  } else {
    const db = new Database(join(dataDir, 'gateway.sqlite'), { readonly: true });
    row = db.prepare(sql).get() as { id: string; d: string } | undefined;
    db.close();
  }
  if (!row) throw new Error(`no session at row ${depth}`);
  const date = row.d instanceof Date ? row.d : new Date(`${row.d.replace(' ', 'T')}Z`);
  return encodeCursor('LAST_UPDATED_DESC', { key: date.toISOString(), id: row.id });
}

/**
 * The statements of one request as the gateway runs them (sessions/session-list.ts readList),
 * each with what it read: MySQL handler reads, SQLite the plan. Statements of a search are
 * named: `bound` (where a walk stops), `walk` (the order's index, each row tested), `matches`
 * (driven from the full-text index).
 */
async function readsOf(url: string | null, dataDir: string, q: Query, after: string | null): Promise<string> {
  const costs = await statementCosts(url, dataDir, async (run) => {
    const reads = readList(run, url ? 'mariadb' : 'sqlite', q.who, q.filter, 'LAST_UPDATED_DESC', { first: 25, after }, false);
    await Promise.all([reads.rows, reads.beyond, q.count ? reads.count() : null]);
  });
  const sourceOf = (sql: string) => (/ OFFSET /.test(sql) ? 'bound ' : /m\.session_id/.test(sql) ? 'matches ' : /:search/.test(sql) ? 'walk ' : '');
  const parts = costs.map((c) => `${sourceOf(c.sql)}${url ? c.reads.toLocaleString('en-US') : `[${c.plan.replace(/\n/g, '; ')}]`}`);
  return parts.join(' + ') + (url ? ' rows read' : '');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

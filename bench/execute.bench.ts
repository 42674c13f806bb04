import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { issueToken } from '../src/server/auth';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { BENCH_SECRET, gatewayEnv, startChild, type BenchChild } from './bench-child';
import { createBenchDatabase } from './bench-database';
import { fmt, sampleLoad, summarise, type LoadResult, type LoadSample } from './load';

/**
 * Execute throughput and capacity of ONE gateway instance (its own process, NODE_ENV=production,
 * as `npm start` runs it), on embedded SQLite and, with BENCH_MYSQL_URL, on MySQL/MariaDB, each
 * against the same baseline in the same run: the test suite's Responses API stand-in (streaming
 * SSE) driven directly by the openai SDK. This process plays the clients and the stand-in.
 *
 *  1. executes/s, p50, p99 with a zero-latency provider, 8 clients each with its own session,
 *     in interleaved rounds with the stand-in alone; the gateway's CPU time, SQL statements and
 *     transactions per execute;
 *  2. N executes at once against a provider that answers after 2 s: how many the provider sees
 *     in flight at once, when all are done, RSS per in-flight execute, errors; the stand-in alone
 *     answering as many at once is the baseline.
 *
 *   npm run bench:execute
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test npm run bench:execute   # both databases
 *   BENCH_PROFILE_DIR=/tmp/prof …   # the gateway runs with --cpu-prof, profiles written there
 */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IN_FLIGHT_LEVELS = (process.env.BENCH_IN_FLIGHT ?? '500,2000').split(',').map(Number);
const LATENCY_MS = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 2000);
const COUNTED_EXECUTES = 10;
const TOKEN = issueToken({ userId: 'bench-user', orgId: 'acme', roles: ['admin'] }, BENCH_SECRET);
const GATEWAY = resolve(__dirname, 'list-gateway.js');
const EXECUTE = `mutation($input: AgentExecuteInput!) { execute(input: $input) {
  ... on AgentFinalResponse { sessionId turnId primaryOutputText usage { totalTokens } }
} }`;

interface Gateway {
  readonly child: BenchChild;
  readonly agentContextId: string;
  /** User + system CPU time of the gateway process so far, from /proc. */
  cpuMs(): number;
  close(): Promise<void>;
}

interface Database {
  readonly name: string;
  /** Null: embedded SQLite. */
  readonly mysqlUrl: string | null;
}

async function startGateway(db: Database, env: Record<string, string>): Promise<Gateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-exec-'));
  const database = db.mysqlUrl ? await createBenchDatabase(db.mysqlUrl, 'gw_bench_exec') : null;
  const profile = process.env.BENCH_PROFILE_DIR;
  const child = await startChild(
    GATEWAY,
    {
      ...gatewayEnv(dataDir, '20', database?.url ?? null),
      // One bench user sends thousands of executes: the per-user and per-org budgets would
      // refuse them, so they are off here (0 = no limit), explicitly.
      RATE_LIMIT_EXECUTES_PER_MINUTE: '0',
      RATE_LIMIT_ORG_EXECUTES_PER_MINUTE: '0',
      MAX_TURNS_IN_FLIGHT_PER_USER: '0',
      ...env,
    },
    join(dataDir, 'gateway.log'),
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
  );
  const created = await graphql<{ upsertAgentContext: { id: string } }>(
    child.url,
    'mutation { upsertAgentContext(input: { name: "Bench", vectorCollection: "bench", defaultModel: "gpt-4.1-mini" }) { id } }',
  );
  return {
    child,
    agentContextId: created.upsertAgentContext.id,
    cpuMs: () => {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    },
    async close() {
      await child.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url.replace(/\/graphql$/, '')}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { extensions?: { code?: string }; message: string }[] };
  if (!body.data) throw new Error(body.errors?.[0]?.extensions?.code ?? body.errors?.[0]?.message ?? `HTTP ${res.status}`);
  return body.data;
}

/** A client with a session of its own: its follow-ons chain, as in real use. */
function sessionClient(g: Gateway): () => Promise<void> {
  let sessionId: string | null = null;
  let n = 0;
  return async () => {
    n++;
    const input = {
      agentContextId: g.agentContextId,
      instruction: `Question ${n}: how does the retry policy work?`,
      ...(sessionId ? { sessionId } : {}),
      activeFiles: [{ path: 'src/retry.ts', content: `export const retries = ${n % 3};\n` }],
    };
    const data = await graphql<{ execute: { sessionId: string; primaryOutputText?: string } }>(g.child.url, EXECUTE, { input });
    if (!data.execute.primaryOutputText) throw new Error('no answer');
    sessionId = data.execute.sessionId;
  };
}

function providerCall(fake: FakeOpenAI): () => Promise<void> {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0, timeout: 120_000 });
  return async () => {
    const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'How does the retry policy work?', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    if (!text) throw new Error('no text');
  };
}

/** Closed loop; a client (and so its session) has one request out at a time; failures are counted, not fatal. */
async function load(makeClient: () => () => Promise<void>, seconds: number, errors: string[]): Promise<LoadSample> {
  const free = Array.from({ length: CONCURRENCY }, makeClient);
  return sampleLoad(
    async () => {
      const client = free.pop() as () => Promise<void>;
      try {
        await client();
      } catch (e) {
        errors.push((e as Error).message);
      } finally {
        free.push(client);
      }
    },
    CONCURRENCY,
    seconds,
  );
}

/** SQL calls (a multi-statement query is one: one round trip on MySQL) and transactions per execute, over COUNTED_EXECUTES sequential follow-ons of one session. */
async function statementsPerExecute(g: Gateway): Promise<{ statements: number; transactions: number }> {
  const client = sessionClient(g);
  await client();
  const statements = await g.child.statementsDuring(async () => {
    for (let i = 0; i < COUNTED_EXECUTES; i++) await client();
  });
  const transactions = statements.filter((s) => /^(BEGIN|START TRANSACTION)/i.test(s)).length;
  return { statements: statements.length / COUNTED_EXECUTES, transactions: transactions / COUNTED_EXECUTES };
}

interface ThroughputResult {
  readonly alone: LoadResult;
  readonly gateway: LoadResult;
  readonly cpuMsPerExecute: number;
  readonly errors: string[];
}

async function throughput(db: Database): Promise<ThroughputResult> {
  const fake = await startFakeOpenAI({ record: false });
  const g = await startGateway(db, { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url });
  try {
    const errors: string[] = [];
    await load(() => providerCall(fake), 1, errors);
    await load(() => sessionClient(g), 1, errors);
    const sql = await statementsPerExecute(g);
    const alone: LoadSample[] = [];
    const gateway: LoadSample[] = [];
    let cpuMs = 0;
    const seconds = SECONDS / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(await load(() => providerCall(fake), seconds, errors));
      const cpu0 = g.cpuMs();
      gateway.push(await load(() => sessionClient(g), seconds, errors));
      cpuMs += g.cpuMs() - cpu0;
    }
    const gatewayResult = summarise(gateway);
    const r: ThroughputResult = { alone: summarise(alone), gateway: gatewayResult, cpuMsPerExecute: cpuMs / Math.max(1, gatewayResult.requests), errors };
    const ratio = r.gateway.perSecond / r.alone.perSecond;
    console.log(`\n1. ${db.name}: ${CONCURRENCY} clients, each with its own session (follow-ons chain), zero-latency provider, ${ROUNDS} interleaved rounds of ${seconds.toFixed(1)} s`);
    console.log(`   baseline, the stand-in driven by the openai SDK, no gateway  ${fmt(r.alone)}`);
    console.log(`   gateway execute -> OpenAI adapter -> stand-in                ${fmt(r.gateway)}`);
    console.log(
      `   gateway / stand-in alone: ${ratio.toFixed(2)}x req/s, p50 +${(r.gateway.p50Ms - r.alone.p50Ms).toFixed(1)} ms; ` +
        `gateway CPU ${r.cpuMsPerExecute.toFixed(1)} ms per execute; ${sql.statements} SQL calls (round trips on MySQL) in ${sql.transactions} transactions per execute; ` +
        `${errors.length} errors${errors.length ? ` (${[...new Set(errors)].join(', ')})` : ''}`,
    );
    return r;
  } finally {
    await g.close();
    await fake.close();
  }
}

interface CapacityResult {
  readonly n: number;
  readonly peakOpen: number;
  readonly seconds: number;
  readonly aloneSeconds: number;
  readonly kbPerInFlight: number;
  readonly failed: number;
}

/** N executes at once against a provider that answers after LATENCY_MS; the peak the provider sees open is what the gateway holds. */
async function capacity(db: Database): Promise<CapacityResult[]> {
  const fake = await startFakeOpenAI({ record: false, latencyMs: LATENCY_MS });
  const g = await startGateway(db, { OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url, LLM_TIMEOUT_MS: '120000' });
  const direct = providerCall(fake);
  const results: CapacityResult[] = [];
  console.log(`\n2. ${db.name}: executes at once, each a new session, provider latency ${LATENCY_MS} ms; gateway idle RSS ${mb(g.child.rssBytes())}`);
  try {
    for (const n of IN_FLIGHT_LEVELS) {
      let alonePeak = 0;
      const aloneSampler = setInterval(() => (alonePeak = Math.max(alonePeak, fake.open)), 25);
      const t0 = performance.now();
      const alone = await Promise.allSettled(Array.from({ length: n }, () => direct()));
      const aloneSeconds = (performance.now() - t0) / 1000;
      clearInterval(aloneSampler);

      const rssBefore = g.child.rssBytes();
      let peakRss = rssBefore;
      let peakOpen = 0;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, g.child.rssBytes());
        peakOpen = Math.max(peakOpen, fake.open);
      }, 25);
      const t1 = performance.now();
      const settled = await Promise.allSettled(
        Array.from({ length: n }, (_, i) => graphql(g.child.url, EXECUTE, { input: { agentContextId: g.agentContextId, instruction: `In flight ${i}` } })),
      );
      clearInterval(sampler);
      const seconds = (performance.now() - t1) / 1000;
      const failed = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      const reasons = [...new Set(failed.map((f) => String((f.reason as Error).message)))].join(', ');
      const result = { n, peakOpen, seconds, aloneSeconds, kbPerInFlight: (peakRss - rssBefore) / 1024 / Math.max(1, peakOpen), failed: failed.length };
      results.push(result);
      console.log(
        `   ${String(n).padStart(5)} at once: ${n - failed.length} answered in ${seconds.toFixed(2)} s (${(seconds / aloneSeconds).toFixed(2)}x the stand-in alone), ` +
          `peak ${peakOpen} in flight at the provider, gateway RSS ${mb(rssBefore)} -> ${mb(peakRss)} (~${result.kbPerInFlight.toFixed(0)} KB per in-flight execute), ` +
          `${failed.length} errors${failed.length ? ` (${reasons})` : ''}` +
          ` | baseline, the stand-in alone: ${alone.filter((r) => r.status === 'fulfilled').length} in ${aloneSeconds.toFixed(2)} s, peak ${alonePeak} in flight`,
      );
    }
  } finally {
    await g.close();
    await fake.close();
  }
  return results;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const databases: Database[] = [
    { name: 'embedded SQLite', mysqlUrl: null },
    ...(process.env.BENCH_MYSQL_URL ? [{ name: 'MySQL/MariaDB', mysqlUrl: process.env.BENCH_MYSQL_URL }] : []),
  ];
  console.log(`node ${process.version}; each gateway in its own process (NODE_ENV=production), blobs in the embedded store (DATA_DIR/blobs.sqlite); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (!process.env.BENCH_MYSQL_URL) console.log('MySQL/MariaDB: skipped (set BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test to measure it too)');
  const summary: string[] = [];
  for (const db of databases) {
    const t = await throughput(db);
    const c = await capacity(db);
    summary.push(
      `   ${db.name}: ${(t.gateway.perSecond / t.alone.perSecond).toFixed(2)}x the stand-in's req/s (goal >= 0.43x: 300 of the issue's 699/s), ` +
        `p50 +${(t.gateway.p50Ms - t.alone.p50Ms).toFixed(1)} ms over it (goal <= +10 ms), ${t.cpuMsPerExecute.toFixed(1)} ms gateway CPU per execute, ${t.errors.length} errors`,
      ...c.map(
        (r) =>
          `   ${db.name}, ${r.n} at once: ${r.peakOpen} of ${r.n} in flight at the provider at once, done in ${r.seconds.toFixed(1)} s = ${(r.seconds / r.aloneSeconds).toFixed(2)}x the stand-in alone ` +
          `(goal: all, <= 4 s), ~${r.kbPerInFlight.toFixed(0)} KB per in-flight execute (goal <= 100), ${r.failed} errors`,
      ),
    );
  }
  console.log(`\nSummary (load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}):\n${summary.join('\n')}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { issueToken } from '../src/server/auth';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { createBenchDatabase } from './bench-database';
import { fmt, runLoad } from './load';

/**
 * Execute throughput and capacity of ONE gateway instance (its own process, as `npm start`
 * runs it), each against a baseline in the same run. This process plays the clients and
 * the provider: the test suite's local Responses API stand-in (streaming SSE).
 *
 *  1. executes/s, p50, p99 with a zero-latency provider, against (a) the stand-in driven
 *     directly by the openai SDK, no gateway, and (b) the gateway on its offline adapter;
 *  2. how many executes one instance holds in flight when the provider takes 2 s to
 *     answer, with the gateway's RSS, against the stand-in alone holding as many.
 *
 *   npm run bench:build && node dist-bench/bench/execute.bench.js
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/test node dist-bench/bench/execute.bench.js
 */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const IN_FLIGHT_LEVELS = (process.env.BENCH_IN_FLIGHT ?? '100,500,1000,2000').split(',').map(Number);
const LATENCY_MS = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 2000);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
const TOKEN = issueToken({ userId: 'bench-user', orgId: 'acme', roles: ['admin'] }, SECRET);
const MAIN = resolve(__dirname, '../src/main.js');
const EXECUTE = `mutation($input: AgentExecuteInput!) { execute(input: $input) {
  ... on AgentFinalResponse { sessionId turnId primaryOutputText usage { totalTokens } }
} }`;

interface GatewayProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly agentContextId: string;
  /** Resident set size of the gateway process, from /proc. */
  rssBytes(): number;
  close(): Promise<void>;
}

async function startGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-exec-'));
  const database = await benchDatabase();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      JWT_SECRET: SECRET,
      DB_POOL_SIZE: '20',
      // One bench user sends thousands of executes: the per-user budgets would stop it.
      RATE_LIMIT_EXECUTES_PER_MINUTE: '0',
      RATE_LIMIT_ORG_EXECUTES_PER_MINUTE: '0',
      MAX_TURNS_IN_FLIGHT_PER_USER: '0',
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ready, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'gateway listening' && entry.url) ready(entry.url.replace(/\/graphql$/, ''));
    });
  });
  const created = await graphql<{ upsertAgentContext: { id: string } }>(
    url,
    'mutation { upsertAgentContext(input: { name: "Bench", vectorCollection: "bench", defaultModel: "gpt-4.1-mini" }) { id } }',
  );
  return {
    child,
    url,
    agentContextId: created.upsertAgentContext.id,
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    async close() {
      await new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      });
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { extensions?: { code?: string }; message: string }[] };
  if (!body.data) throw new Error(body.errors?.[0]?.extensions?.code ?? body.errors?.[0]?.message ?? `HTTP ${res.status}`);
  return body.data;
}

function benchDatabase(): Promise<{ url: string; drop(): Promise<void> }> | null {
  const base = process.env.BENCH_MYSQL_URL;
  return base ? createBenchDatabase(base, 'gw_bench_exec') : null;
}

/** A client with a session of its own: its follow-ons chain, as in real use. */
function sessionClient(g: GatewayProcess): () => Promise<void> {
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
    const data = await graphql<{ execute: { sessionId: string; primaryOutputText?: string } }>(g.url, EXECUTE, { input });
    if (!data.execute.primaryOutputText) throw new Error('no answer');
    sessionId = data.execute.sessionId;
  };
}

/** Closed loop; a client (and so its session) has one request out at a time. */
function load(makeClient: () => () => Promise<void>, concurrency: number, seconds: number) {
  const free = Array.from({ length: concurrency }, makeClient);
  return runLoad(
    async () => {
      const client = free.pop() as () => Promise<void>;
      try {
        await client();
      } finally {
        free.push(client);
      }
    },
    concurrency,
    seconds,
  );
}

function providerClient(fake: FakeOpenAI): () => () => Promise<void> {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0, timeout: 60_000 });
  return () => async () => {
    const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'How does the retry policy work?', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    if (!text) throw new Error('no text');
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function throughput(dialect: string): Promise<void> {
  const fake = await startFakeOpenAI({ record: false });
  const viaOpenAI = await startGateway({ OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url });
  const offline = await startGateway({});
  try {
    for (const warm of [providerClient(fake), () => sessionClient(viaOpenAI), () => sessionClient(offline)]) await load(warm, 4, 1);
    const raw = await load(providerClient(fake), CONCURRENCY, SECONDS);
    const off = await load(() => sessionClient(offline), CONCURRENCY, SECONDS);
    const real = await load(() => sessionClient(viaOpenAI), CONCURRENCY, SECONDS);
    console.log(`\n1. Throughput: ${CONCURRENCY} clients, each with its own session (follow-ons chain), ${SECONDS} s each, ${dialect}, zero-latency provider`);
    console.log(`   baseline: the stand-in driven by the openai SDK, no gateway  ${fmt(raw)}`);
    console.log(`   baseline: gateway execute on the offline adapter              ${fmt(off)}`);
    console.log(`   gateway execute -> OpenAI adapter -> stand-in                 ${fmt(real)}`);
    console.log(`   OpenAI path / offline path: ${(real.perSecond / off.perSecond).toFixed(2)}x`);
  } finally {
    await viaOpenAI.close();
    await offline.close();
    await fake.close();
  }
}

/** N executes at once against a provider that answers after LATENCY_MS; the peak the provider sees open is what the gateway holds. */
async function capacity(dialect: string): Promise<void> {
  const fake = await startFakeOpenAI({ record: false, latencyMs: LATENCY_MS });
  const g = await startGateway({ OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url, LLM_TIMEOUT_MS: '120000' });
  const direct = providerClient(fake)();
  console.log(`\n2. Concurrent in-flight executes, provider latency ${LATENCY_MS} ms, ${dialect}; gateway idle RSS ${mb(g.rssBytes())}`);
  try {
    for (const n of IN_FLIGHT_LEVELS) {
      const t0 = performance.now();
      const alone = await Promise.allSettled(Array.from({ length: n }, () => direct()));
      const aloneSeconds = (performance.now() - t0) / 1000;

      const rssBefore = g.rssBytes();
      let peakRss = rssBefore;
      let peakOpen = 0;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, g.rssBytes());
        peakOpen = Math.max(peakOpen, fake.open);
      }, 25);
      const t1 = performance.now();
      const results = await Promise.allSettled(
        Array.from({ length: n }, (_, i) => graphql(g.url, EXECUTE, { input: { agentContextId: g.agentContextId, instruction: `In flight ${i}` } })),
      );
      clearInterval(sampler);
      const seconds = (performance.now() - t1) / 1000;
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      const reasons = [...new Set(failed.map((f) => String((f.reason as Error).message)))].join(', ');
      console.log(
        `   ${String(n).padStart(5)} at once: ${n - failed.length} completed in ${seconds.toFixed(2)} s, peak ${peakOpen} in flight at the provider, ` +
          `gateway RSS ${mb(rssBefore)} -> ${mb(peakRss)} (~${((peakRss - rssBefore) / 1024 / Math.max(1, peakOpen)).toFixed(0)} KB per in-flight execute)` +
          `${failed.length ? `, ${failed.length} failed (${reasons})` : ''}` +
          ` | baseline, the stand-in alone: ${alone.filter((r) => r.status === 'fulfilled').length} in ${aloneSeconds.toFixed(2)} s`,
      );
    }
  } finally {
    await g.close();
    await fake.close();
  }
}

async function main(): Promise<void> {
  const dialect = process.env.BENCH_MYSQL_URL ? 'MySQL/MariaDB' : 'embedded SQLite';
  console.log(`node ${process.version}; gateway in its own process on ${dialect}, blobs on the filesystem`);
  await throughput(dialect);
  await capacity(dialect);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import OpenAI from 'openai';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createGateway, type Gateway } from '../src/main';
import { issueToken } from '../src/server/auth';
import { startFakeOpenAI, type FakeOpenAI } from '../test/support/fake-openai';
import { fmt, runLoad } from './load';

/**
 * Execute throughput and capacity, each against a baseline in the same run:
 *
 *  1. executes/s, p50, p99 with a zero-latency provider stand-in (the test suite's local
 *     Responses API, streaming), against (a) the same stand-in driven directly by the openai
 *     SDK, no gateway, and (b) the gateway on its offline adapter (no provider hop);
 *  2. how many concurrent in-flight executes one instance holds when the provider takes
 *     2 s to answer, with the process RSS, against the stand-in alone holding as many.
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
const EXECUTE = `mutation($input: AgentExecuteInput!) { execute(input: $input) {
  ... on AgentFinalResponse { sessionId turnId primaryOutputText usage { totalTokens } }
} }`;

interface Started {
  readonly gateway: Gateway;
  readonly url: string;
  readonly agentContextId: string;
  close(): Promise<void>;
}

async function startGateway(env: Record<string, string>): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-exec-'));
  const database = await benchDatabase();
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    JWT_SECRET: SECRET,
    DB_POOL_SIZE: '20',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const gateway = await createGateway(config, createLogger('error'));
  const url = await gateway.listen();
  const agent = await gateway.services.contexts.upsertAgentContext(
    { userId: 'bench-user', userName: 'Bench', orgId: 'acme', orgName: 'Acme', roles: ['admin'] },
    { name: 'Bench', vectorCollection: 'bench', defaultModel: 'gpt-4.1-mini' },
  );
  return {
    gateway,
    url,
    agentContextId: agent.id,
    async close() {
      await gateway.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function benchDatabase(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const base = process.env.BENCH_MYSQL_URL;
  if (!base) return null;
  const name = `gw_bench_exec_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const conn = await createConnection({ uri: base });
  await conn.query(`CREATE DATABASE ${name}`);
  await conn.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = await createConnection({ uri: base });
      await c.query(`DROP DATABASE ${name}`);
      await c.end();
    },
  };
}

/** One execute over HTTP; each worker keeps its own session, so follow-ons chain as in real use. */
function executor(g: Started) {
  return () => {
    let sessionId: string | null = null;
    let n = 0;
    return async () => {
      const input = {
        agentContextId: g.agentContextId,
        instruction: `Question ${n++}: how does the retry policy work?`,
        ...(sessionId ? { sessionId } : {}),
        activeFiles: [{ path: 'src/retry.ts', content: `export const retries = ${n % 3};\n` }],
      };
      const res = await fetch(`${g.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ query: EXECUTE, variables: { input } }),
      });
      const body = (await res.json()) as { data?: { execute: { sessionId: string; primaryOutputText?: string } }; errors?: unknown };
      if (!body.data?.execute.primaryOutputText) throw new Error(JSON.stringify(body.errors));
      sessionId = body.data.execute.sessionId;
    };
  };
}

/** Closed loop; a worker (and so its session) serves one request at a time. */
async function load(makeWorker: () => () => Promise<void>, concurrency: number, seconds: number) {
  const free = Array.from({ length: concurrency }, makeWorker);
  return runLoad(
    async () => {
      const worker = free.pop() as () => Promise<void>;
      try {
        await worker();
      } finally {
        free.push(worker);
      }
    },
    concurrency,
    seconds,
  );
}

function rawProvider(fake: FakeOpenAI) {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0 });
  return () => async () => {
    const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'How does the retry policy work?', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    if (!text) throw new Error('no text');
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function throughput(): Promise<void> {
  const fake = await startFakeOpenAI({ record: false });
  const openai = await startGateway({ OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url });
  const offline = await startGateway({});
  try {
    const dialect = openai.gateway.db.dialect;
    await load(rawProvider(fake), 4, 1);
    await load(executor(openai), 4, 1);
    await load(executor(offline), 4, 1);
    const raw = await load(rawProvider(fake), CONCURRENCY, SECONDS);
    const viaOpenAI = await load(executor(openai), CONCURRENCY, SECONDS);
    const viaOffline = await load(executor(offline), CONCURRENCY, SECONDS);
    console.log(`\n1. Throughput, ${CONCURRENCY} concurrent clients, ${SECONDS} s each, ${dialect}, zero-latency provider`);
    console.log(`   baseline: stand-in driven by the openai SDK, no gateway  ${fmt(raw)}`);
    console.log(`   baseline: gateway execute on the offline adapter          ${fmt(viaOffline)}`);
    console.log(`   gateway execute -> OpenAI adapter -> stand-in             ${fmt(viaOpenAI)}`);
    console.log(`   gateway / raw provider: ${(viaOpenAI.perSecond / raw.perSecond).toFixed(2)}x; OpenAI path / offline path: ${(viaOpenAI.perSecond / viaOffline.perSecond).toFixed(2)}x`);
  } finally {
    await openai.close();
    await offline.close();
    await fake.close();
  }
}

/** N executes at once against a provider that answers after LATENCY_MS; all must complete. */
async function capacity(): Promise<void> {
  const fake = await startFakeOpenAI({ record: false, latencyMs: LATENCY_MS });
  const g = await startGateway({ OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: fake.url, LLM_TIMEOUT_MS: '60000' });
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0, timeout: 60_000 });
  console.log(`\n2. Concurrent in-flight executes, provider latency ${LATENCY_MS} ms, ${g.gateway.db.dialect}`);
  try {
    for (const n of IN_FLIGHT_LEVELS) {
      const started = performance.now();
      const rawDone = await Promise.allSettled(
        Array.from({ length: n }, async () => {
          const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'hi', stream: true });
          for await (const _event of stream) void _event;
        }),
      );
      const rawSeconds = (performance.now() - started) / 1000;
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      let peakRss = rssBefore;
      let peakInFlight = 0;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
        peakInFlight = Math.max(peakInFlight, g.gateway.orchestrator.inFlightCount);
      }, 50);
      const t0 = performance.now();
      const results = await Promise.allSettled(
        Array.from({ length: n }, async (_, i) => {
          const res = await fetch(`${g.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
            body: JSON.stringify({ query: EXECUTE, variables: { input: { agentContextId: g.agentContextId, instruction: `In flight ${i}` } } }),
          });
          const body = (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
          if (!body.data) throw new Error(body.errors?.[0]?.extensions?.code ?? 'no data');
        }),
      );
      clearInterval(sampler);
      const seconds = (performance.now() - t0) / 1000;
      const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      const reasons = [...new Set(failed.map((f) => String((f.reason as Error).message)))].join(', ');
      console.log(
        `   ${String(n).padStart(5)} executes: ${n - failed.length} completed in ${seconds.toFixed(2)} s (peak ${peakInFlight} in flight), ` +
          `RSS ${mb(rssBefore)} -> peak ${mb(peakRss)} (+${((peakRss - rssBefore) / 1024 / Math.max(1, peakInFlight)).toFixed(0)} KB per in-flight execute)` +
          `${failed.length ? `, ${failed.length} failed (${reasons})` : ''}; baseline, stand-in alone: ${rawDone.filter((r) => r.status === 'fulfilled').length} in ${rawSeconds.toFixed(2)} s`,
      );
    }
  } finally {
    await g.close();
    await fake.close();
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.env.BENCH_MYSQL_URL ? 'MySQL/MariaDB' : 'embedded SQLite'}, blobs on the filesystem`);
  await throughput();
  await capacity();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

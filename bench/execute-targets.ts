import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import type { FakeOpenAI } from '../test/support/fake-openai';
import { BENCH_SECRET, gatewayEnv, startChild, type BenchChild } from './bench-child';
import { createBenchDatabase } from './bench-database';
import { COUNTED_EXECUTES, TOKEN, TOKENS, VIA_REST } from './execute-options';

/*
 * What bench/execute.bench.ts drives (the gateway and the hand-written program, each in its own
 * process on a database of its own) and the clients that drive them.
 */
const GATEWAY = resolve(__dirname, 'list-gateway.js');
const BASELINE = resolve(__dirname, 'execute-baseline.js');
const EXECUTE = `mutation($input: AgentExecuteInput!) { execute(input: $input) {
  ... on AgentFinalResponse { sessionId turnId primaryOutputText usage { totalTokens } }
} }`;

/** What the clients drive: the gateway, or the hand-written program doing the same job. */
export interface Target {
  readonly child: BenchChild;
  readonly agentContextId: string;
  /** An agent context of each org (index as in TOKENS); the first is agentContextId. */
  readonly contextIds: readonly string[];
  /** One execute as this target's clients send it, by the admin of org `org` (default 0); its answer's session and text. */
  execute(input: Record<string, unknown>, org?: number): Promise<ExecuteAnswer>;
  /** User + system CPU time so far, from /proc: of the target's process, and of its main thread (the event loop). */
  cpuMs(): { readonly process: number; readonly main: number };
  close(): Promise<void>;
}

export interface ExecuteAnswer {
  readonly sessionId: string;
  readonly primaryOutputText?: string;
}

export interface DatabaseUnderTest {
  readonly name: string;
  /** Null: embedded SQLite. */
  readonly mysqlUrl: string | null;
}

/**
 * The local MySQL/MariaDB server's process (it shares this machine's cores with the gateway
 * and the clients), or null: its CPU per execute is what each target's SQL costs the server.
 */
export function databaseServerStat(): string | null {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (/^(mariadbd|mysqld)$/.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) return `/proc/${pid}/stat`;
    } catch {
      // A process that exited meanwhile.
    }
  }
  return null;
}

/** utime + stime of a /proc stat file, in ms (clock ticks of 10 ms); 0 without one. */
export function cpuMsOf(statFile: string | null): number {
  if (statFile === null) return 0;
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** A started child as a Target: its CPU time from /proc, and a close that also drops its database and data directory. */
function targetOf(
  child: BenchChild,
  contextIds: readonly string[],
  execute: Target['execute'],
  database: { drop(): Promise<void> } | null,
  dataDir: string,
): Target {
  return {
    child,
    agentContextId: contextIds[0] as string,
    contextIds,
    execute,
    cpuMs: () => ({ process: cpuMsOf(`/proc/${child.pid}/stat`), main: cpuMsOf(`/proc/${child.pid}/task/${child.pid}/stat`) }),
    async close() {
      await child.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function startGateway(db: DatabaseUnderTest, env: Record<string, string>): Promise<Target> {
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
  const contextIds: string[] = [];
  for (const token of TOKENS) {
    const created = await graphql<{ upsertAgentContext: { id: string } }>(
      child.url,
      'mutation { upsertAgentContext(input: { name: "Bench", vectorCollection: "bench", defaultModel: "gpt-4.1-mini" }) { id } }',
      {},
      token,
    );
    contextIds.push(created.upsertAgentContext.id);
  }
  const execute = VIA_REST ? (input: Record<string, unknown>, org = 0) => restExecute(child.url, input, org) : graphqlExecute(child.url);
  return targetOf(child, contextIds, execute, database, dataDir);
}

/** The hand-written program (bench/execute-baseline.ts) on a database of its own, against the same stand-in. */
export async function startBaseline(db: DatabaseUnderTest, fake: FakeOpenAI): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-exec-baseline-'));
  const database = db.mysqlUrl ? await createBenchDatabase(db.mysqlUrl, 'gw_bench_exec_baseline') : null;
  const child = await startChild(
    BASELINE,
    {
      JWT_SECRET: BENCH_SECRET,
      PROVIDER_URL: fake.url,
      BENCH_POOL_SIZE: '20',
      ...(database ? { BENCH_MYSQL_URL: database.url } : { BENCH_SQLITE_FILE: join(dataDir, 'baseline.sqlite') }),
    },
    join(dataDir, 'baseline.log'),
  );
  const contextIds: string[] = [];
  for (const token of TOKENS) {
    const res = await fetch(`${child.url}/context`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{}' });
    contextIds.push(((await res.json()) as { id: string }).id);
  }
  return targetOf(child, contextIds, graphqlExecute(child.url), database, dataDir);
}

async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}, token = TOKEN): Promise<T> {
  const res = await fetch(`${url.replace(/\/graphql$/, '')}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: { extensions?: { code?: string }; message: string }[] };
  if (!body.data) throw new Error(body.errors?.[0]?.extensions?.code ?? body.errors?.[0]?.message ?? `HTTP ${res.status}`);
  return body.data;
}

const graphqlExecute =
  (url: string) =>
  async (input: Record<string, unknown>, org = 0): Promise<ExecuteAnswer> =>
    (await graphql<{ execute: ExecuteAnswer }>(url, EXECUTE, { input }, TOKENS[org])).execute;

async function restExecute(url: string, input: Record<string, unknown>, org: number): Promise<ExecuteAnswer> {
  const res = await fetch(`${url.replace(/\/graphql$/, '')}/api/ai/agent/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS[org]}` },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as ExecuteAnswer & { errorCode?: string };
  if (!res.ok) throw new Error(body.errorCode ?? `HTTP ${res.status}`);
  return body;
}

/** A client with a session of its own: its follow-ons chain, as in real use. */
export function sessionClient(g: Target): () => Promise<void> {
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
    const answer = await g.execute(input);
    if (!answer.primaryOutputText) throw new Error('no answer');
    sessionId = answer.sessionId;
  };
}

export function providerCall(fake: FakeOpenAI): () => Promise<void> {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.url, maxRetries: 0, timeout: 120_000 });
  return async () => {
    const stream = await client.responses.create({ model: 'gpt-4.1-mini', input: 'How does the retry policy work?', stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    if (!text) throw new Error('no text');
  };
}

/** SQL calls (a multi-statement query is one: one round trip on MySQL) and transactions per execute, over COUNTED_EXECUTES sequential follow-ons of one session. */
export async function statementsPerExecute(g: Target): Promise<{ statements: number; transactions: number }> {
  const client = sessionClient(g);
  await client();
  const statements = await g.child.statementsDuring(async () => {
    for (let i = 0; i < COUNTED_EXECUTES; i++) await client();
  });
  const transactions = statements.filter((s) => /^(BEGIN|START TRANSACTION)/i.test(s)).length;
  return { statements: statements.length / COUNTED_EXECUTES, transactions: transactions / COUNTED_EXECUTES };
}

/** A client whose every execute starts a new session, as a burst's do. */
export const newSessionClient = (t: Target) => async () => {
  const answer = await t.execute({ agentContextId: t.agentContextId, instruction: 'Warm-up: how does the retry policy work?' });
  if (!answer.primaryOutputText) throw new Error('no answer');
};

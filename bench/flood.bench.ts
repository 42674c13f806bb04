import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { issueToken } from '../src/server/auth';
import { FLOOD_WITH_DEFAULT, FLOOD_WITH_VARIABLE, SUMMARY_PAGE } from '../test/support/client-queries';
import { BENCH_SECRET } from './bench-child';

/**
 * The floods of issue 8 against gateway processes on the same seeded SQLite data: the
 * one built from this checkout and, with BENCH_BEFORE_DIR set to another built checkout
 * (e.g. main's, `git archive main | tar -x -C DIR`, then `npx tsc -p tsconfig.build.json`
 * there), that one too, in the same run. Per query: HTTP status, time to the last byte,
 * bytes, the gateway's peak RSS while it ran (VmHWM, reset before each query), and the
 * longest /healthz answer meanwhile (how long the event loop was blocked). The ordinary
 * dashboard page of 100 summaries is the reference each gateway is compared with.
 *
 *   npm run bench:flood
 *   BENCH_BEFORE_DIR=/tmp/gw-main npm run bench:flood
 */
/** Sessions for the dashboard page; then one more session with TURNS turns, which the floods read. */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const TURNS = Number(process.env.BENCH_TURNS ?? 100);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 180_000);
const ROOT = resolve(__dirname, '..', '..');

interface Gateway {
  readonly label: string;
  readonly url: string;
  readonly process: ChildProcess;
}

interface Measured {
  readonly status: number;
  readonly ms: number;
  readonly bytes: number;
  readonly peakRssMb: number;
  readonly maxHealthMs: number;
  readonly outcome: string;
}

async function main(): Promise<void> {
  const seeded = mkdtempSync(join(tmpdir(), 'gw-flood-seed-'));
  for (const [sessions, turns] of [[SESSIONS, 3], [1, TURNS]]) {
    const seed = spawnSync(process.execPath, [join(ROOT, 'dist-bench/src/cli/seed.js'), '--org', 'acme', '--users', '8', '--sessions', String(sessions), '--turns', String(turns)], {
      env: { ...process.env, DATA_DIR: seeded, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    if (seed.status !== 0) throw new Error(`seeding failed: ${seed.stderr}`);
    console.log(seed.stdout.split('\n')[0]);
  }

  const builds = [
    ...(process.env.BENCH_BEFORE_DIR ? [{ label: 'before', main: join(resolve(process.env.BENCH_BEFORE_DIR), 'dist/main.js') }] : []),
    { label: 'after', main: join(ROOT, 'dist-bench/src/main.js') },
  ];
  const token = issueToken({ userId: 'user-1', orgId: 'acme', roles: ['admin'] }, BENCH_SECRET);
  const rows: string[] = [];
  for (const build of builds) {
    if (!existsSync(build.main)) throw new Error(`${build.main} does not exist: build that checkout first`);
    const dataDir = mkdtempSync(join(tmpdir(), `gw-flood-${build.label}-`));
    cpSync(seeded, dataDir, { recursive: true });
    const gateway = await start(build.label, build.main, dataDir);
    try {
      const sessionId = await firstSessionId(gateway, token);
      const queries = [
        ['dashboard page (100 summaries)', SUMMARY_PAGE, { first: 100 }],
        ['flood, $n = 100', FLOOD_WITH_VARIABLE, { id: sessionId, n: 100 }],
        ['flood, first left out (50)', FLOOD_WITH_DEFAULT, { id: sessionId }],
      ] as const;
      // The first run warms the process up (JIT, prepared statements); the second is the reference.
      await measure(gateway, token, queries[0][1], queries[0][2]);
      const reference = await measure(gateway, token, queries[0][1], queries[0][2]);
      for (const [name, query, variables] of queries) {
        const m = name === queries[0][0] ? reference : await measure(gateway, token, query, variables);
        rows.push(
          [
            build.label.padEnd(6),
            name.padEnd(32),
            String(m.status).padStart(4),
            `${m.ms.toFixed(0).padStart(7)} ms (${(m.ms / reference.ms).toFixed(1).padStart(6)}x ref)`,
            `${(m.bytes / 1e6).toFixed(2).padStart(8)} MB`,
            `peak RSS ${m.peakRssMb.toFixed(0).padStart(5)} MB`,
            `/healthz max ${m.maxHealthMs.toFixed(0).padStart(6)} ms`,
            m.outcome,
          ].join('  '),
        );
      }
    } finally {
      gateway.process.kill('SIGTERM');
      await new Promise((r) => gateway.process.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  rmSync(seeded, { recursive: true, force: true });
  console.log(rows.join('\n'));
}

async function start(label: string, mainJs: string, dataDir: string): Promise<Gateway> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-old-space-size=4096', mainJs], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, JWT_SECRET: BENCH_SECRET, LOG_LEVEL: 'error', NODE_ENV: 'development' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the ${label} gateway did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { label, url, process: child };
}

async function firstSessionId(gateway: Gateway, token: string): Promise<string> {
  const res = await post(gateway, token, '{ agentSessions(first: 1, orderBy: CREATED_DESC) { edges { node { id turnCount } } } }', {});
  const body = JSON.parse(Buffer.from(res.body).toString('utf8')) as { data: { agentSessions: { edges: { node: { id: string } }[] } } };
  const id = body.data.agentSessions.edges[0]?.node.id;
  if (!id) throw new Error('no seeded session');
  return id;
}

async function measure(gateway: Gateway, token: string, query: string, variables: Record<string, unknown>): Promise<Measured> {
  const pid = gateway.process.pid as number;
  // Resets VmHWM (the peak resident set) to the current RSS.
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  let done = false;
  let maxHealthMs = 0;
  const pinger = (async () => {
    while (!done) {
      const t0 = performance.now();
      await fetch(`${gateway.url}/healthz`).then((r) => r.arrayBuffer());
      maxHealthMs = Math.max(maxHealthMs, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const started = performance.now();
  const res = await post(gateway, token, query, variables);
  const ms = performance.now() - started;
  done = true;
  await pinger;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { status: res.status, ms, bytes: res.body.byteLength, peakRssMb: peakKb / 1024, maxHealthMs, outcome: outcomeOf(res.body) };
}

async function post(gateway: Gateway, token: string, query: string, variables: Record<string, unknown>): Promise<{ status: number; body: ArrayBuffer }> {
  const res = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return { status: res.status, body: await res.arrayBuffer() };
}

/** "data" or the first error's code and message, from the start of the body (it may be hundreds of MB). */
function outcomeOf(body: ArrayBuffer): string {
  const head = Buffer.from(body, 0, Math.min(body.byteLength, 400)).toString('utf8');
  const error = /"message":"([^"]{0,90})[^]*?"code":"([A-Z_]+)"/.exec(head);
  return error ? `${error[2]}: ${error[1]}` : 'data';
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { projectRoot, startServerProcess, stopServerProcess, type ServerProcess } from '../support/server-process';

const run = promisify(execFile);
const SECRET = 'examples-secret-examples-secret-examples';

/**
 * examples/ as the README shows them: against the built server, seeded, with a token from
 * `npm run token`, and a model (the provider stand-in) so the tool round trip has one to ask.
 */
describe('the examples run against a started gateway', () => {
  let dataDir: string;
  let server: ServerProcess;
  let fake: FakeOpenAI;
  let env: Record<string, string>;
  const example = async (file: string, args: string[] = []) => {
    const [command, argv] = file.endsWith('.sh') ? ['sh', [file, ...args]] : [process.execPath, [file, ...args]];
    const { stdout, stderr } = await run(command, argv, { cwd: projectRoot, env, timeout: 30_000 });
    expect(stderr).toBe('');
    return stdout;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-examples-'));
    const base = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, JWT_SECRET: SECRET };
    await run(process.execPath, ['dist/cli/seed.js', '--org', 'acme', '--users', '3', '--sessions', '7', '--turns', '1'], { cwd: projectRoot, env: base });
    const token = (await run(process.execPath, ['dist/cli/token.js', '--user', 'user-1', '--org', 'acme', '--admin'], { cwd: projectRoot, env: base })).stdout.trim();
    fake = await startFakeOpenAI();
    server = await startServerProcess({ ...base, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: fake.url });
    env = { PATH: base.PATH, GATEWAY_URL: `${server.url}/graphql`, TOKEN: token };
  }, 60_000);
  afterAll(async () => {
    if (server) await stopServerProcess(server.child);
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('list-sessions.mjs pages through the sessions by cursor', async () => {
    const out = await example('examples/list-sessions.mjs', ['5']);
    expect(out).toMatch(/^page 1 of 7 sessions:$/m);
    expect(out).toMatch(/^page 2 of 7 sessions:$/m);
    expect(out.split('\n').filter((l) => l.startsWith('  '))).toHaveLength(7);
  });

  it('execute.mjs reads the union answer through its fragments', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Back off ', 'exponentially.'] });
    const out = await example('examples/execute.mjs', ['Explain the retry policy']);
    expect(out).toMatch(/^turn \S+ of session \S+ answered \(\d+ tokens\):\nBack off exponentially\.$/m);
  });

  it('follow-turn-ws.mjs streams a turn over WebSocket with the client package', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Back off ', 'exponentially, ', 'with jitter.'], delayMs: 100 });
    const out = await example('examples/follow-turn-ws.mjs', ['Explain the retry policy']);
    expect(out).toMatch(/^turn \S+ started; its answer:\nBack off exponentially, with jitter\.$/m);
    expect(out.trimEnd().endsWith('(turn finished)')).toBe(true);
  });

  it('follow-turn-sse.sh streams a turn over Server-Sent Events with curl', async () => {
    const out = await example('examples/follow-turn-sse.sh');
    expect(out).toMatch(/^turn \S+ started; its answer as events:$/m);
    const events = out.split('\n').filter((l) => l.startsWith('event: '));
    expect(events.at(-1)).toBe('event: complete');
    expect(events.filter((e) => e === 'event: next').length).toBeGreaterThan(0);
    expect(out).toContain('"textDelta":"Answer to: "');
  });

  it('tool-round-trip.mjs runs the client tool the model asks for and continues the turn to its answer', async () => {
    fake.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'read_file', arguments: JSON.stringify({ path: 'package.json' }) }] },
      { kind: 'text', chunks: ['The project is agent-session-gateway.'] },
    );
    const out = await example('examples/tool-round-trip.mjs');
    expect(out).toContain('the model asks for read_file({"path":"package.json"})');
    expect(out).toMatch(/^final answer of turn \S+:\nThe project is agent-session-gateway\.$/m);
    // The model's second call carried the file the script read.
    const continued = JSON.stringify(fake.requests.at(-1)?.body ?? {});
    expect(continued).toContain('agent-session-gateway');
    expect(continued).toContain('function_call_output');
  });
});

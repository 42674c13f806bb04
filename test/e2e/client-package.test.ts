import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../support/server-process';
import { addTurn } from '../support/turns';
import { alice, startGateway, type TestGateway } from '../support/testkit';

/**
 * The typed client as a client team gets it: `npm pack` in packages/client (its prepack builds
 * it), the tarball installed into a fresh app with nothing of this repository around it, and
 * the app importing it both ways and talking to a started gateway over both transports.
 * No network: the client's own dependencies are packed from this checkout's node_modules and
 * installed beside it with --offline. It packs a copy of packages/client (its build tools
 * reached through a node_modules link), so the examples' suite, which imports the package's
 * build, never sees its dist/ rebuilt under it.
 */
const DEPENDENCIES = ['graphql', 'graphql-ws', 'graphql-sse', '@graphql-typed-document-node/core', 'ws'];

/** The app: a query, then the first sessionActivity event. `WS_IMPL=1` passes `ws` as the WebSocket class (Node 20 has none). */
const app = (load: string) => `${load}
const transport = process.env.TRANSPORT;
const client = createGatewayClient({
  url: process.env.GATEWAY_URL,
  token: process.env.TOKEN,
  transport,
  ...(process.env.WS_IMPL ? { webSocketImpl: WebSocketImpl } : {}),
});
(async () => {
  const viewer = await client.query(ViewerDocument);
  console.log(JSON.stringify({ viewer: viewer.me.user.id }));
  client.onStatus((s) => { if (s === 'connected') console.log(JSON.stringify({ status: s })); });
  client.subscribe(SessionActivityDocument, {}, {
    next: async (data) => {
      console.log(JSON.stringify({ event: data.sessionActivity.session.name, status: data.sessionActivity.status }));
      await client.dispose();
    },
    error: (e) => { console.error(e.message); process.exit(2); },
  });
})().catch((e) => { console.error(e.stack); process.exit(1); });
`;

describe('the client package, packed and installed into a fresh app', () => {
  let t: TestGateway;
  let dir: string;
  let appDir: string;
  let packageDir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-client-pack-'));
    const packs = join(dir, 'packs');
    appDir = join(dir, 'app');
    mkdirSync(packs);
    mkdirSync(appDir);
    packageDir = join(dir, 'client');
    cpSync(join(projectRoot, 'packages/client'), packageDir, { recursive: true, filter: (src) => !/[\\/](dist|node_modules)$/.test(src) });
    symlinkSync(join(projectRoot, 'node_modules'), join(packageDir, 'node_modules'), 'dir');
    execFileSync('npm', ['pack', '--silent', '--pack-destination', packs], { cwd: packageDir, stdio: ['ignore', 'ignore', 'inherit'] });
    for (const name of DEPENDENCIES) {
      execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', packs], { cwd: join(projectRoot, 'node_modules', name), stdio: 'ignore' });
    }
    writeFileSync(join(appDir, 'package.json'), JSON.stringify({ name: 'some-app', version: '1.0.0', private: true }));
    const tarballs = readdirSync(packs).map((f) => join(packs, f));
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], { cwd: appDir, stdio: ['ignore', 'ignore', 'inherit'] });
    writeFileSync(
      join(appDir, 'app.cjs'),
      app(`const { createGatewayClient, ViewerDocument, SessionActivityDocument } = require('agent-session-gateway-client');\nconst WebSocketImpl = require('ws');`),
    );
    writeFileSync(
      join(appDir, 'app.mjs'),
      app(`import { createGatewayClient, ViewerDocument, SessionActivityDocument } from 'agent-session-gateway-client';\nimport WebSocketImpl from 'ws';`),
    );
    t = await startGateway();
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the builds, the types and nothing of the server', () => {
    const files = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: packageDir, encoding: 'utf8' });
    const paths = (JSON.parse(files) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['dist/index.mjs', 'dist/index.cjs', 'dist/types/index.d.ts', 'package.json']));
    expect(paths.filter((p) => !/^(dist\/|src\/operations\/|package\.json$|README\.md$)/.test(p))).toEqual([]);
    const installed = readdirSync(join(appDir, 'node_modules')).sort();
    expect(installed).not.toContain('typeorm');
    expect(installed).not.toContain('express');
  });

  /** Runs the app; resolves with what it printed once it exits, adding a turn as soon as its subscription is live. */
  async function run(file: string, transport: 'ws' | 'sse', wsImpl: boolean): Promise<Record<string, unknown>[]> {
    const session = await t.gateway.sessions.lifecycle.createSession(alice, { name: `seen by ${file} over ${transport}`, agentContextId: 'ac', isPublic: true });
    const child: ChildProcess = spawn(process.execPath, [file], {
      cwd: appDir,
      env: { PATH: process.env.PATH ?? '', GATEWAY_URL: `${t.url}/graphql`, TOKEN: t.tokenOf(alice), TRANSPORT: transport, ...(wsImpl ? { WS_IMPL: '1' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      lines.push(entry);
      if (entry['status'] === 'connected') void addTurn(t.gateway.sessions.lifecycle, alice, session.id);
    });
    const code = await new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        done(c);
      });
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    return lines;
  }

  it.each([
    ['app.cjs', 'ws'],
    ['app.cjs', 'sse'],
    ['app.mjs', 'ws'],
    ['app.mjs', 'sse'],
  ] as const)('%s (require / import) runs a query and a subscription over %s', async (file, transport) => {
    // A WebSocket class only where one is needed: Node 22 has a global one, Node 20 does not; SSE needs none.
    const needsWs = transport === 'ws' && typeof (globalThis as { WebSocket?: unknown }).WebSocket !== 'function';
    const lines = await run(file, transport, needsWs);
    expect(lines[0]).toEqual({ viewer: 'alice' });
    expect(lines).toContainEqual({ event: `seen by ${file} over ${transport}`, status: 'PENDING' });
  });
});

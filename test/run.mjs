#!/usr/bin/env node
// `npm test`: type-check, check the layer rules, find out which real services are reachable, then run jest.
// Without MySQL, Redis, Chromium, HAProxy or kubectl the suites that need them are skipped and listed; with
// CI=true a missing service fails the run before any test starts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
import net from 'node:net';

const require = createRequire(import.meta.url);
const ci = /^(1|true)$/i.test(process.env.CI ?? '');
const env = { ...process.env };
env.TEST_MYSQL_URL ??= 'mysql://root@127.0.0.1:3306/test';
env.TEST_REDIS_URL ??= 'redis://127.0.0.1:6379';
env.TEST_CHROMIUM_PATH ??= '/usr/bin/chromium';
env.TEST_HAPROXY_PATH ??= '/usr/sbin/haproxy';
env.TEST_KUBECTL_PATH ??= 'kubectl';

/** Null when reachable; `socket` is the server's Unix socket when it is on this machine (null otherwise). */
async function probeMysql(url) {
  const mysql = require('mysql2/promise');
  let conn;
  try {
    conn = await mysql.createConnection({ uri: url, connectTimeout: 3000 });
    const [[{ socket }]] = await conn.query('SELECT @@socket AS socket');
    return { error: null, socket: socket && existsSync(socket) ? socket : null };
  } catch (e) {
    return { error: e.message, socket: null };
  } finally {
    await conn?.end().catch(() => {});
  }
}

function probeRedis(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    const done = (err) => {
      socket.destroy();
      resolve(err);
    };
    socket.setTimeout(3000, () => done('timed out'));
    socket.on('error', (e) => done(e.message));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => done(d.toString().startsWith('+PONG') ? null : `unexpected reply ${d}`));
  });
}

/** Chromium answers --version without starting a browser (and without any network). */
function probeChromium(path) {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 15_000 });
  if (result.error) return result.error.code === 'ENOENT' ? 'not installed (apt-get install chromium)' : result.error.message;
  return result.status === 0 && /chrom/i.test(result.stdout) ? null : `--version failed: ${(result.stderr || result.stdout).trim()}`;
}

/** A command-line tool the deployment suites run: null when `args` makes it print `pattern`. */
function probeTool(path, args, pattern, install) {
  const result = spawnSync(path, args, { encoding: 'utf8', timeout: 15_000 });
  if (result.error) return result.error.code === 'ENOENT' ? `not installed (${install})` : result.error.message;
  return result.status === 0 && pattern.test(result.stdout + result.stderr) ? null : `${args.join(' ')} failed: ${(result.stderr || result.stdout).trim()}`;
}

const problems = [];
const { error: mysqlError, socket: mysqlSocket } = await probeMysql(env.TEST_MYSQL_URL);
env.GATEWAY_TEST_MYSQL_OK = mysqlError ? '0' : '1';
if (mysqlError) problems.push(`MySQL at ${env.TEST_MYSQL_URL}: ${mysqlError}`);
else if (!mysqlSocket) problems.push(`MySQL at ${env.TEST_MYSQL_URL}: its Unix socket is not on this machine`);
env.GATEWAY_TEST_MYSQL_SOCKET = mysqlSocket ?? '';
const redisError = await probeRedis(env.TEST_REDIS_URL);
env.GATEWAY_TEST_REDIS_OK = redisError ? '0' : '1';
if (redisError) problems.push(`Redis at ${env.TEST_REDIS_URL}: ${redisError}`);
const browserError = probeChromium(env.TEST_CHROMIUM_PATH);
env.GATEWAY_TEST_BROWSER_OK = browserError ? '0' : '1';
if (browserError) problems.push(`Chromium at ${env.TEST_CHROMIUM_PATH}: ${browserError}`);
const haproxyError = probeTool(env.TEST_HAPROXY_PATH, ['-v'], /HAProxy version/, 'apt-get install haproxy');
env.GATEWAY_TEST_HAPROXY_OK = haproxyError ? '0' : '1';
if (haproxyError) problems.push(`HAProxy at ${env.TEST_HAPROXY_PATH}: ${haproxyError}`);
// Renders the Kustomize base offline (`kubectl kustomize`); no cluster is contacted.
const kubectlError = probeTool(env.TEST_KUBECTL_PATH, ['version', '--client'], /Client Version/, 'kubectl with its built-in kustomize');
env.GATEWAY_TEST_KUBECTL_OK = kubectlError ? '0' : '1';
if (kubectlError) problems.push(`kubectl at ${env.TEST_KUBECTL_PATH}: ${kubectlError}`);

/** The suites that declare they need a service, found by their describeWith* blocks. */
function suitesNeeding(helper) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(new RegExp(`${helper}\\(\\s*'([^']+)'`, 'g'))) {
          found.push(`${relative(process.cwd(), path)}: ${m[1]}`);
        }
      }
    }
  };
  walk('test');
  return found;
}

const skipped = [
  ...(mysqlError ? suitesNeeding('describeWithMysql') : []),
  ...(mysqlSocket ? [] : suitesNeeding('describeWithMysqlSocket')),
  ...(redisError ? suitesNeeding('describeWithRedis') : []),
  ...(browserError ? suitesNeeding('describeWithBrowser') : []),
  ...(haproxyError ? suitesNeeding('describeWithHaproxy') : []),
  ...(kubectlError ? suitesNeeding('describeWithKubectl') : []),
];
const banner = problems.length
  ? `Missing services:\n  - ${problems.join('\n  - ')}\nThese suites are SKIPPED:\n  - ${skipped.join('\n  - ') || '(none)'}`
  : `Using MySQL at ${env.TEST_MYSQL_URL}, Redis at ${env.TEST_REDIS_URL}, Chromium at ${env.TEST_CHROMIUM_PATH}, HAProxy at ${env.TEST_HAPROXY_PATH} and kubectl at ${env.TEST_KUBECTL_PATH}.`;
console.log(banner);
if (problems.length && ci) {
  console.error('CI=true: every service must be reachable; failing instead of skipping.');
  process.exit(1);
}

const args = process.argv.slice(2);
const tsc = (...tscArgs) => {
  const result = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), ...tscArgs], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (!args.includes('--no-typecheck')) {
  tsc('--noEmit', '-p', 'tsconfig.json');
  tsc('--noEmit', '-p', 'tsconfig.web.json');
}
// The layer rules of ARCHITECTURE.md (.dependency-cruiser.js): an arrow that points the wrong way fails the run.
const layers = spawnSync(
  process.execPath,
  [join('node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'), '--config', '.dependency-cruiser.js', 'src', 'packages/client/src'],
  { stdio: 'inherit' },
);
if (layers.status !== 0) {
  console.error('The layer rules are broken (see above; the rules and why they hold are in .dependency-cruiser.js).');
  process.exit(layers.status ?? 1);
}
// ESLint (eslint.config.mjs): any finding, warning or error, fails the run.
if (!args.includes('--no-lint')) {
  const lint = spawnSync(process.execPath, [join('node_modules', 'eslint', 'bin', 'eslint.js'), '--max-warnings', '0', '.'], { stdio: 'inherit' });
  if (lint.status !== 0) {
    console.error('ESLint found problems (see above); `npm run lint -- --fix` fixes some of them.');
    process.exit(lint.status ?? 1);
  }
}
// The end-to-end suites run the built server, CLIs and dashboard, as `npm start` does.
tsc('-p', 'tsconfig.build.json');
// The examples (examples/) import the client package as a user would: its JavaScript build.
const clientBuild = spawnSync(process.execPath, ['packages/client/scripts/build.mjs', '--js-only'], { stdio: 'inherit' });
if (clientBuild.status !== 0) process.exit(clientBuild.status ?? 1);
const web = spawnSync(process.execPath, ['scripts/build-web.mjs'], { stdio: 'inherit' });
if (web.status !== 0) process.exit(web.status ?? 1);
const jest = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...args.filter((a) => a !== '--no-typecheck' && a !== '--no-lint')], {
  stdio: 'inherit',
  env,
});
if (problems.length) console.log(`\nReminder: ${banner}`);
process.exit(jest.status ?? 1);

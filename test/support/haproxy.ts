import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from './server-process';
import { haproxyPath } from './services';

export const HAPROXY_CONFIG = join(projectRoot, 'deploy/haproxy/haproxy.cfg');
/** Host names would be resolved through this; the tests give addresses, so nothing is asked. */
export const HAPROXY_DNS = '127.0.0.1:53';

export interface ServerState {
  readonly status: string;
  /** Sessions (requests) the server took. */
  readonly requests: number;
  readonly checkStatus: string;
  readonly checkCode: string;
}

export interface RunningHaproxy {
  readonly child: ChildProcess;
  /** Where clients connect, without a path. */
  readonly url: string;
  readonly statsUrl: string;
  stop(): Promise<void>;
}

/** Debian's haproxy with deploy/haproxy/haproxy.cfg in front of the two gateway addresses (host:port). */
export async function startHaproxy(a: string, b: string): Promise<RunningHaproxy> {
  const [bind, stats] = [await freePort(), await freePort()];
  const child = spawn(haproxyPath!, ['-db', '-f', HAPROXY_CONFIG], {
    env: {
      PATH: process.env.PATH ?? '',
      HAPROXY_DNS,
      GATEWAY_A_ADDR: a,
      GATEWAY_B_ADDR: b,
      HAPROXY_BIND: `127.0.0.1:${bind}`,
      HAPROXY_STATS_BIND: `127.0.0.1:${stats}`,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return {
    child,
    url: `http://127.0.0.1:${bind}`,
    statsUrl: `http://127.0.0.1:${stats}/;csv`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** HAProxy's stats page as CSV: each server's state, by `backend/server`. */
export async function serverStates(url: string): Promise<Map<string, ServerState>> {
  const [header, ...rows] = (await (await fetch(url)).text()).trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  return new Map(
    rows
      .map((line) => line.split(','))
      .map((row) => [
        `${at(row, 'pxname')}/${at(row, 'svname')}`,
        { status: at(row, 'status'), requests: Number(at(row, 'stot')), checkStatus: at(row, 'check_status'), checkCode: at(row, 'check_code') },
      ]),
  );
}

export async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

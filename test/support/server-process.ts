import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const projectRoot = resolve(__dirname, '../..');

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Base URL, without /graphql. */
  readonly url: string;
  /** Every log line at level error or above (pino's 50, 60), as printed: what went wrong inside. */
  readonly errorLogs: string[];
}

/**
 * `node dist/main.js`, as `npm start` runs it, on a free port, with only the environment
 * given (plus PATH): nothing of the test runner's environment leaks into the server.
 * Resolves once the server logs "gateway listening".
 */
export function startServerProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const errorLogs: string[] = [];
  return new Promise((ready, reject) => {
    const timer = setTimeout(() => {
      // Nothing else holds the child: left running, it would keep the test runner from exiting.
      child.kill('SIGKILL');
      reject(new Error('server did not start in time'));
    }, timeoutMs);
    child.once('exit', (code) => reject(new Error(`server exited early with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; url?: string; level?: number };
      if ((entry.level ?? 0) >= 50) errorLogs.push(line);
      if (entry.msg === 'gateway listening' && entry.url) {
        clearTimeout(timer);
        ready({ child, url: entry.url.replace(/\/graphql$/, ''), errorLogs });
      }
    });
  });
}

/** SIGTERM, then the exit code once the process is gone. */
export function stopServerProcess(child: ChildProcess): Promise<number | null> {
  // A child killed by a signal has no exit code, only a signal code.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => {
    child.once('exit', (code) => done(code));
    child.kill('SIGTERM');
  });
}

/** A GraphQL operation posted to the gateway at `url` with `token`; throws with the errors when no data came back. */
export async function postGraphQL<T>(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (!body.data) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

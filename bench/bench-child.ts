import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

/**
 * A server under benchmark in a process of its own (so its RSS is its own), and the small
 * IPC protocol between it and the bench: the child says where it listens, and records the
 * SQL statements it runs while the parent counts.
 */
type Command = { readonly type: 'count-start' } | { readonly type: 'count-stop' };
type Message =
  | { readonly type: 'ready'; readonly url: string }
  | { readonly type: 'counting' }
  | { readonly type: 'statements'; readonly statements: string[] };

/** Child side: SQL text of every statement run between count-start and count-stop. */
export class StatementLog {
  private recording: string[] | null = null;

  record(sql: string): void {
    this.recording?.push(sql);
  }

  start(): void {
    this.recording = [];
  }

  stop(): string[] {
    const statements = this.recording ?? [];
    this.recording = null;
    return statements;
  }
}

/** Child side: answer the parent, and close cleanly on SIGTERM. */
export function serveParent(url: string, log: StatementLog, close: () => Promise<void>): void {
  process.on('message', (command: Command) => {
    if (command.type === 'count-start') {
      log.start();
      process.send?.({ type: 'counting' } satisfies Message);
    } else {
      process.send?.({ type: 'statements', statements: log.stop() } satisfies Message);
    }
  });
  process.once('SIGTERM', () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  process.send?.({ type: 'ready', url } satisfies Message);
}

/** The JWT secret every bench gateway and its clients share. */
export const BENCH_SECRET = 'bench-secret-bench-secret-bench-secret!!';

/** What a bench gateway child runs with: production mode on loopback, its own data directory and pool. */
export function gatewayEnv(dataDir: string, poolSize: string, databaseUrl: string | null): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    JWT_SECRET: BENCH_SECRET,
    DB_POOL_SIZE: poolSize,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
}

export interface BenchChild {
  readonly pid: number;
  readonly url: string;
  /** Resident set size, from /proc. */
  rssBytes(): number;
  /** The statements the child ran while `work` ran. */
  statementsDuring(work: () => Promise<void>): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Parent side: forks `script` with exactly `env` (plus PATH) and node flags `execArgv` (node
 * refuses --cpu-prof in NODE_OPTIONS); its stdout (logs) goes to `logFile`. BENCH_CHILD_FLAGS
 * adds node flags to every child: `--perf-basic-prof` lets `perf record -p <pid>` name JS
 * functions (V8's own profile counts time a thread waits to be scheduled as the function it
 * waits in; perf counts CPU only).
 */
export async function startChild(script: string, env: Record<string, string>, logFile: string, execArgv: readonly string[] = []): Promise<BenchChild> {
  const out = openSync(logFile, 'a');
  const child: ChildProcess = fork(script, [], {
    env: { PATH: process.env.PATH ?? '', ...env },
    execArgv: [...(process.env.BENCH_CHILD_FLAGS?.split(' ').filter(Boolean) ?? []), ...execArgv],
    stdio: ['ignore', out, 'inherit', 'ipc'],
  });
  closeSync(out);
  const next = (type: Message['type']) =>
    new Promise<Message>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${script} exited with ${code}; its log: ${logFile}`));
      child.once('exit', onExit);
      const onMessage = (m: Message) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      child.on('message', onMessage);
    });
  const ready = await next('ready');
  const pid = child.pid as number;
  return {
    pid,
    url: ready.type === 'ready' ? ready.url : '',
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    async statementsDuring(work) {
      // Acknowledged, so no request of `work` can reach the child before it records.
      const counting = next('counting');
      child.send({ type: 'count-start' } satisfies Command);
      await counting;
      await work();
      const stopped = next('statements');
      child.send({ type: 'count-stop' } satisfies Command);
      const m = await stopped;
      return m.type === 'statements' ? m.statements : [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

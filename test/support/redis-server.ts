import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A throwaway redis-server on a free port that a test can stop and start again. */
export class ScratchRedis {
  private readonly dir = mkdtempSync(join(tmpdir(), 'gw-redis-'));
  private constructor(readonly port: number) {}

  static async start(): Promise<ScratchRedis> {
    const port = await freePort();
    const redis = new ScratchRedis(port);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    await run('redis-server', [
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'yes',
      '--dir', this.dir,
      '--pidfile', join(this.dir, 'redis.pid'),
    ]);
    for (let i = 0; i < 100; i++) {
      if (await this.ping()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  async down(): Promise<void> {
    await run('redis-cli', ['-p', String(this.port), 'shutdown', 'nosave']).catch(() => undefined);
    for (let i = 0; i < 100 && (await this.ping()); i++) await new Promise((r) => setTimeout(r, 50));
  }

  async dispose(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async ping(): Promise<boolean> {
    try {
      const { stdout } = await run('redis-cli', ['-p', String(this.port), 'ping']);
      return stdout.trim() === 'PONG';
    } catch {
      return false;
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

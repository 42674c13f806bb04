import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

/**
 * Profiles for bench/fanout.bench.ts (BENCH_PROFILE_DIR): a heap snapshot once every client
 * has subscribed (what an idle subscriber costs) and a CPU profile of the publishing phase
 * only, without the connection storm before it. Both server processes use it.
 */
export class PhaseProfiler {
  private session: Session | null = null;

  constructor(private readonly dir: string | undefined) {}

  heapSnapshot(label: string): void {
    if (this.dir) writeHeapSnapshot(join(this.dir, `${label}.heapsnapshot`));
  }

  async start(): Promise<void> {
    if (!this.dir || this.session) return;
    const session = new Session();
    session.connect();
    this.session = session;
    await this.post('Profiler.enable');
    await this.post('Profiler.setSamplingInterval', { interval: 200 });
    await this.post('Profiler.start');
  }

  async stop(label: string): Promise<void> {
    if (!this.dir || !this.session) return;
    const { profile } = (await this.post('Profiler.stop')) as { profile: unknown };
    writeFileSync(join(this.dir, `${label}.cpuprofile`), JSON.stringify(profile));
    this.session.disconnect();
    this.session = null;
  }

  private post(method: string, params?: object): Promise<unknown> {
    return new Promise((resolve, reject) => this.session!.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
  }
}

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

/**
 * Profiles for bench/fanout.bench.ts (BENCH_PROFILE_DIR): a heap snapshot once every client
 * has subscribed (what an idle subscriber costs) and a CPU profile of the publishing phase
 * only, without the connection storm before it. Both server processes use it.
 */
/** BENCH_PROFILE_ALLOCATIONS=1: a sampled allocation profile of the publishing phase (what it allocates, garbage included) instead of the CPU profile. */
const ALLOCATIONS = process.env.BENCH_PROFILE_ALLOCATIONS === '1';

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
    if (ALLOCATIONS) {
      await this.post('HeapProfiler.enable');
      await this.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      return;
    }
    await this.post('Profiler.enable');
    await this.post('Profiler.setSamplingInterval', { interval: 200 });
    await this.post('Profiler.start');
  }

  async stop(label: string): Promise<void> {
    if (!this.dir || !this.session) return;
    const { profile } = (await this.post(ALLOCATIONS ? 'HeapProfiler.stopSampling' : 'Profiler.stop')) as { profile: unknown };
    writeFileSync(join(this.dir, `${label}.${ALLOCATIONS ? 'heapprofile' : 'cpuprofile'}`), JSON.stringify(profile));
    this.session.disconnect();
    this.session = null;
  }

  private post(method: string, params?: object): Promise<unknown> {
    return new Promise((resolve, reject) => this.session!.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))));
  }
}

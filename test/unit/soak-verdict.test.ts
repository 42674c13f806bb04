import { soakVerdict, type Sample } from '../../bench/soak-verdict';

const sample = (atSeconds: number, over: Partial<Sample> = {}): Sample => ({
  atSeconds,
  rssMb: 100,
  heapMb: 40,
  externalMb: 5,
  heapCommittedMb: 60,
  oldSpaceMb: 30,
  oldSpaceUsedMb: 25,
  lagP99Ms: 20,
  p99: { list: 50, execute: 200, cancel: 80 },
  counts: { list: 100, execute: 20, cancel: 5 },
  errors: 0,
  ...over,
});
const run = (seconds: number, at: (t: number) => Partial<Sample>) => Array.from({ length: seconds / 10 }, (_, i) => sample((i + 1) * 10, at((i + 1) * 10)));

describe('the soak verdict (bench:soak)', () => {
  it('passes a steady run, and ignores what happened during the warm-up', () => {
    const verdict = soakVerdict(run(600, (t) => (t <= 120 ? { rssMb: 60 + t / 3, lagP99Ms: 300 } : {})), 120);
    expect(verdict.ok).toBe(true);
  });

  it('fails when RSS grows more than 10% after the warm-up, not at 9%', () => {
    expect(soakVerdict(run(600, (t) => ({ rssMb: t < 540 ? 100 : 112 })), 120).ok).toBe(false);
    expect(soakVerdict(run(600, (t) => ({ rssMb: t < 540 ? 100 : 109 })), 120).ok).toBe(true);
  });

  it('fails when a kind of request’s p99 or the event-loop lag p99 doubles', () => {
    const late = (t: number) => t > 540;
    expect(soakVerdict(run(600, (t) => ({ p99: { list: 50, execute: late(t) ? 450 : 200, cancel: 80 } })), 120).ok).toBe(false);
    expect(soakVerdict(run(600, (t) => ({ lagP99Ms: late(t) ? 45 : 20 })), 120).ok).toBe(false);
    expect(soakVerdict(run(600, (t) => ({ p99: { list: late(t) ? 95 : 50, execute: 200, cancel: 80 } })), 120).ok).toBe(true);
  });

  it('refuses to judge a run with fewer than two samples after the warm-up', () => {
    expect(soakVerdict(run(130, () => ({})), 120)).toEqual({ ok: false, lines: [expect.stringMatching(/run longer/)] });
  });
});

import { CompactionPolicy, flagsGiven, heapFlagsToSet } from '../../src/composition/heap-flags';

describe("the gateway's V8 heap flags", () => {
  it('bounds the heap growth when the process was started without a growth of its own', () => {
    expect(heapFlagsToSet(flagsGiven(['--enable-source-maps'], '--max-old-space-size=1536 --optimize-for-size'))).toEqual(['--heap-growing-percent=25']);
  });

  it("leaves the operator's growth, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(heapFlagsToSet(flagsGiven(['--heap-growing-percent=100']))).toEqual([]);
    expect(heapFlagsToSet(flagsGiven([], '--max-old-space-size=1536 --heap_growing_percent=50'))).toEqual([]);
  });

  it("sees the operator's compaction setting in either form", () => {
    expect(flagsGiven(['--no-compact-on-every-full-gc']).has('compact-on-every-full-gc')).toBe(true);
    expect(flagsGiven([], '--compact_on_every_full_gc').has('compact-on-every-full-gc')).toBe(true);
  });
});

describe('the compaction policy', () => {
  const MB = 2 ** 20;

  it('leaves a dense old space alone, as a heap growing with live data is', () => {
    const policy = new CompactionPolicy(0.7, 4);
    expect([80, 120, 160, 200].map((used) => policy.markCompacted(used * MB, (used + 20) * MB))).toEqual([null, null, null, null]);
  });

  it('compacts the next collection fully once pages are mostly gaps, then goes back', () => {
    const policy = new CompactionPolicy(0.7, 4);
    expect(policy.markCompacted(50 * MB, 91 * MB)).toBe(true);
    expect(policy.markCompacted(50 * MB, 55 * MB)).toBe(false);
  });

  it('compacts fully at most once every few collections, however fragmented', () => {
    const policy = new CompactionPolicy(0.7, 4);
    const changes = Array.from({ length: 10 }, () => policy.markCompacted(40 * MB, 100 * MB));
    expect(changes).toEqual([true, false, null, null, null, true, false, null, null, null]);
  });
});

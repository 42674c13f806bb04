import { heapFlagsToSet } from '../../src/composition/heap-flags';

describe("the gateway's V8 heap flags", () => {
  it('bounds the heap growth when the process was started without a growth of its own', () => {
    expect(heapFlagsToSet(['--enable-source-maps'], '--max-old-space-size=1536 --optimize-for-size')).toEqual(['--heap-growing-percent=25']);
  });

  it("leaves the operator's growth, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(heapFlagsToSet(['--heap-growing-percent=100'])).toEqual([]);
    expect(heapFlagsToSet([], '--max-old-space-size=1536 --heap_growing_percent=50')).toEqual([]);
  });
});

import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * V8's heap settings for a server under load (docs/performance.md has the figures). Under load
 * much of what a request allocates is still referenced when the young generation is collected
 * (it waits on the database), so it is promoted and dies in the old generation, and V8 lets the
 * old generation grow to several times the live heap before collecting it: RSS after the list
 * bench was mostly garbage. Growing by 25% keeps RSS close to the live heap.
 *
 * Not set: `--optimize-for-size`, which keeps RSS flat under the soak's mixed load (V8 compacts
 * more and keeps the young generation small) but costs throughput and CPU per request; an
 * operator who wants memory first sets it in NODE_OPTIONS (README, "Memory").
 * A flag given on the command line or in NODE_OPTIONS (either form) wins.
 */
const HEAP_FLAGS = ['--heap-growing-percent=25'] as const;
/** Set for one mark-compact at a time, when the old space is fragmented, unless the operator set it either way. */
const COMPACT_FLAG = 'compact-on-every-full-gc';
/**
 * Left to itself, a mark-compact moves objects only off pages that are mostly free, so under
 * steady load the old generation's pages fill with gaps: in the 600 s soak it committed 77 →
 * 94 MB while its live part stayed 50–65 MB, and RSS grew 21%. Compacting on every
 * mark-compact held RSS flat but cost ~11% of bench:list's throughput, and one in every eight
 * regardless of need doubled the RSS of 2,000 executes at once (a full compaction in the middle
 * of a burst copies the whole live heap). So a mark-compact that leaves the old space less than
 * USED_BELOW full makes the next one compact fully, at most once every MIN_GAP mark-compacts: a
 * heap growing with live data (a burst) stays dense and is left alone.
 */
const COMPACTION = { usedBelow: 0.7, minGap: 4 } as const;

let compaction: PerformanceObserver | null = null;

export function tuneHeap(): void {
  const given = flagsGiven(process.execArgv, process.env.NODE_OPTIONS);
  for (const flag of heapFlagsToSet(given)) setFlagsFromString(flag);
  if (!given.has(COMPACT_FLAG)) compaction ??= compactWhenFragmented();
}

/** The heap flags the process was not started with (by name, set or negated). */
export function heapFlagsToSet(given: ReadonlySet<string>): string[] {
  return HEAP_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** The names of the flags on the command line and in NODE_OPTIONS. */
export function flagsGiven(execArgv: readonly string[], nodeOptions = ''): Set<string> {
  return new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(flagName));
}

/** Watches mark-compacts (a process-wide observer: V8's flags are process-wide too) and makes the next one compact fully when the old space is fragmented. */
function compactWhenFragmented(): PerformanceObserver {
  const policy = new CompactionPolicy(COMPACTION.usedBelow, COMPACTION.minGap);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry's detail says which collection it was (Node's types leave it unknown).
      const { detail } = entry as PerformanceEntry & { readonly detail?: { readonly kind?: number } };
      if (detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
      const change = old ? policy.markCompacted(old.space_used_size, old.space_size) : null;
      if (change !== null) setFlagsFromString(change ? `--${COMPACT_FLAG}` : `--no-${COMPACT_FLAG}`);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return observer;
}

/** After each mark-compact: whether the next should compact fully, as a change (null: unchanged). */
export class CompactionPolicy {
  private seen = 0;
  private lastFull = -Infinity;
  private full = false;

  constructor(
    private readonly usedBelow: number,
    private readonly minGap: number,
  ) {}

  markCompacted(usedBytes: number, committedBytes: number): boolean | null {
    this.seen++;
    if (this.full) {
      // This was the full one.
      this.full = false;
      this.lastFull = this.seen;
      return false;
    }
    if (this.seen - this.lastFull < this.minGap || usedBytes >= this.usedBelow * committedBytes) return null;
    this.full = true;
    return true;
  }
}

/** `--no-heap_growing_percent=x` → `heap-growing-percent`. */
const flagName = (arg: string): string => arg.replace(/^--(no-)?/, '').split('=')[0]!.replace(/_/g, '-');

import { setFlagsFromString } from 'node:v8';

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
export function tuneHeap(): void {
  for (const flag of heapFlagsToSet(process.execArgv, process.env.NODE_OPTIONS)) setFlagsFromString(flag);
}

/** The heap flags the process was not started with (by name, set or negated). */
export function heapFlagsToSet(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(flagName));
  return HEAP_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** `--no-heap_growing_percent=x` → `heap-growing-percent`. */
const flagName = (arg: string): string => arg.replace(/^--(no-)?/, '').split('=')[0]!.replace(/_/g, '-');

import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { EmbeddedVectorStore } from '../src/retrieval/embedded-vector-store.adapter';
import type { ChunkFilter, EmbeddingSpace } from '../src/retrieval/vector-store.port';

/**
 * The gateway's side of the retrieval bench, in a process of its own so its memory is the
 * store's alone: it opens the index a finished ingest left on disk, as a restarted gateway
 * would, answers the queries it is handed, and reports timings, hits and memory.
 *
 *   node --expose-gc dist-bench/bench/retrieval-reader.js <job.json>
 */
export interface ReaderJob {
  readonly indexDir: string;
  readonly collection: string;
  readonly space: EmbeddingSpace;
  /** Little-endian float32, queries one after another. */
  readonly queryFile: string;
  /** Where the hits go as each query is answered, one JSON line per query. */
  readonly hitsFile: string;
  readonly limit: number;
  readonly modes: readonly { readonly name: string; readonly filter: ChunkFilter }[];
}

export interface Memory {
  readonly rss: number;
  readonly heapUsed: number;
  /** Memory outside the JS heap: typed arrays, buffers, native libraries' allocations reported to V8. */
  readonly external: number;
  /**
   * The JS heap's young generation as reserved. V8 grows it while many objects survive its
   * collections (a load's rows do) and gives it back after ~20 s without allocation; any busy
   * gateway has it at full size whatever it holds, so it is reported apart from the index.
   */
  readonly youngGeneration: number;
}

export interface ReaderHit {
  readonly id: string;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
}

export interface ReaderReport {
  readonly before: Memory;
  readonly loaded: Memory;
  readonly afterQueries: Memory;
  readonly coldLoadMs: number;
  readonly modes: Record<string, { readonly ms: number[]; readonly hits: ReaderHit[][] }>;
}

/**
 * What the process holds once garbage is gone. V8 frees the memory of dead ArrayBuffers on a
 * background sweeper after a collection: measured at once, the snapshot reader's 16 MB read
 * buffers and the growth copies of the int8 matrix would still count, though nothing holds them.
 */
async function memory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 500));
  gc?.();
  const m = process.memoryUsage();
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, youngGeneration: young };
}

async function main(): Promise<void> {
  const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ReaderJob;
  const raw = readFileSync(job.queryFile);
  const all = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const d = job.space.dimension;
  const queries = Array.from({ length: all.length / d }, (_, i) => all.slice(i * d, (i + 1) * d));

  const before = await memory();
  const store = new EmbeddedVectorStore(job.indexDir);
  let t0 = performance.now();
  await store.search(job.collection, job.space, queries[0]!, {}, job.limit);
  const coldLoadMs = performance.now() - t0;
  const loaded = await memory();

  // The hits leave the process as they come: kept here, thousands of them would survive V8's
  // collections, grow its young generation and count as the index's memory.
  const hitsFd = openSync(job.hitsFile, 'w');
  const ms = job.modes.map(() => new Float64Array(queries.length));
  for (const [m, mode] of job.modes.entries()) {
    for (const [i, q] of queries.entries()) {
      t0 = performance.now();
      const found = await store.search(job.collection, job.space, q, mode.filter, job.limit);
      ms[m]![i] = performance.now() - t0;
      const hits: ReaderHit[] = found.map((h) => ({ id: h.id, path: h.payload.path, startLine: h.payload.startLine, endLine: h.payload.endLine }));
      writeSync(hitsFd, `${JSON.stringify(hits)}\n`);
    }
  }
  closeSync(hitsFd);
  const afterQueries = await memory();
  await store.close();
  const lines = readFileSync(job.hitsFile, 'utf8').trimEnd().split('\n');
  const modes: ReaderReport['modes'] = {};
  job.modes.forEach((mode, m) => {
    const hits = lines.slice(m * queries.length, (m + 1) * queries.length).map((l) => JSON.parse(l) as ReaderHit[]);
    modes[mode.name] = { ms: [...ms[m]!], hits };
  });
  const report: ReaderReport = { before, loaded, afterQueries, coldLoadMs, modes };
  process.stdout.write(JSON.stringify(report));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedVectorStore } from '../src/retrieval/embedded-vector-store.adapter';
import type { Embedder, EmbeddingKind } from '../src/retrieval/embedder.port';
import { ingestTree } from '../src/retrieval/ingest';
import { LocalHashEmbedder } from '../src/retrieval/local-embedder.adapter';
import type { ChunkFilter } from '../src/retrieval/vector-store.port';
import { CodeGenerator, generateTree, type Definition } from './code-tree';
import { CapturingStore, ExactScan, type ExactHit } from './exact-scan';
import { ModelLikeEmbedder } from './model-embedder';
import type { Memory, ReaderHit, ReaderJob, ReaderReport } from './retrieval-reader';

/**
 * Embedded retrieval at repository scale. A generated code base of about BENCH_CHUNKS chunks
 * (default 50,000) is ingested into the embedded index, once per embedder in
 * BENCH_EMBEDDERS: `model` (1,536-dimension model-like embeddings, see model-embedder.ts)
 * and `local` (the 1,024-dimension hashing embedder). A separate process then opens the
 * index as a restarted gateway would and answers "where is <function> defined?" queries,
 * unfiltered and filtered, reporting its latency and memory (retrieval-reader.ts).
 *
 * Baseline, in the same run: a hand-written exact scan over the same vectors (exact-scan.ts),
 * which is also the ground truth for recall@8 of the index's answers.
 *
 *   npm run bench:retrieval
 *   BENCH_CHUNKS=500000 BENCH_EMBEDDERS=model BENCH_QUERIES=200 npm run bench:retrieval
 */
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 50_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const EMBEDDERS = (process.env.BENCH_EMBEDDERS ?? 'model,local').split(',').map((s) => s.trim());
const LIMIT = 8;
const REPO = 'acme/platform';

const MODES: { name: string; filter: ChunkFilter }[] = [
  { name: 'no filter', filter: {} },
  // One service of eight, one language of four: ~1/32 of the chunks.
  { name: 'repo+language+path', filter: { repo: REPO, language: 'typescript', pathPrefix: 'services/billing' } },
  // One area of one service, one language: ~1/128.
  { name: 'narrow path+language', filter: { language: 'typescript', pathPrefix: 'services/billing/core' } },
];

const MB = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const percentile = (ms: readonly number[], q: number) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const fmt = (ms: readonly number[]) => `p50 ${percentile(ms, 0.5).toFixed(2).padStart(7)} ms  p99 ${percentile(ms, 0.99).toFixed(2).padStart(7)} ms`;
const seconds = (t0: number) => (performance.now() - t0) / 1000;

function makeEmbedder(name: string): Embedder {
  if (name === 'model') return new ModelLikeEmbedder();
  if (name === 'local') return new LocalHashEmbedder();
  throw new Error(`unknown embedder "${name}" in BENCH_EMBEDDERS (model, local)`);
}

/** Counts the documents an ingest embeds. */
class CountingEmbedder implements Embedder {
  documents = 0;
  constructor(private readonly inner: Embedder) {}
  get id() {
    return this.inner.id;
  }
  get dimension() {
    return this.inner.dimension;
  }
  embed(texts: readonly string[], kind: EmbeddingKind) {
    if (kind === 'document') this.documents += texts.length;
    return this.inner.embed(texts, kind);
  }
}

/** Inserts one line at the top of a 2,000-line file and counts the chunks a re-ingest embeds again. */
async function churn(): Promise<void> {
  const tree = mkdtempSync(join(tmpdir(), 'gw-bench-churn-'));
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-churn-index-'));
  try {
    const { text } = new CodeGenerator(7).file('src/big.ts', 2000);
    writeFileSync(join(tree, 'big.ts'), text);
    const store = new EmbeddedVectorStore(dir);
    const embedder = new CountingEmbedder(new LocalHashEmbedder());
    const options = { root: tree, repo: REPO, collection: 'churn' };
    const first = await ingestTree({ store, embedder }, options);
    embedder.documents = 0;
    writeFileSync(join(tree, 'big.ts'), `// Copyright header added later\n${text}`);
    const second = await ingestTree({ store, embedder }, options);
    await store.close();
    console.log(
      `one line inserted at the top of a 2,000-line file: ${embedder.documents} of ${first.chunksAdded} chunks re-embedded ` +
        `(${second.chunksUnchanged} unchanged, ${second.chunksRemoved} removed)`,
    );
  } finally {
    rmSync(tree, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

function readerReport(job: ReaderJob, dir: string): ReaderReport {
  const jobFile = join(dir, 'job.json');
  writeFileSync(jobFile, JSON.stringify(job));
  const child = spawnSync(process.execPath, ['--expose-gc', join(__dirname, 'retrieval-reader.js'), jobFile], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0) throw new Error(`the reader process failed (${child.status ?? child.signal})`);
  return JSON.parse(child.stdout) as ReaderReport;
}

const definedIn = (d: Definition, h: { path: string; startLine: number; endLine: number }) =>
  h.path === d.path && h.startLine <= d.line && d.line <= h.endLine;

function recallAt(found: readonly ReaderHit[][], truth: readonly ExactHit[][]): number {
  let sum = 0;
  for (let i = 0; i < truth.length; i++) {
    const want = new Set(truth[i]!.map((h) => h.id));
    if (want.size === 0) {
      sum += 1;
      continue;
    }
    sum += found[i]!.filter((h) => want.has(h.id)).length / want.size;
  }
  return sum / truth.length;
}

/** How model-like the vectors are: cosine of random pairs, and of each query to random chunks and to its exact neighbours. */
function spaceStats(exact: ExactScan, queries: readonly Float32Array[], truth: readonly ExactHit[][]): string {
  let x = 12345;
  const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % exact.size;
  let pairs = 0;
  let toRandom = 0;
  for (let i = 0; i < 1000; i++) {
    pairs += exact.cosine(exact.row(rand()), rand());
    toRandom += exact.cosine(queries[i % queries.length]!, rand());
  }
  const mean = (at: (t: readonly ExactHit[]) => number) => (truth.reduce((s, t) => s + at(t), 0) / truth.length).toFixed(3);
  return (
    `cosine of random chunk pairs ${(pairs / 1000).toFixed(3)}; of a query to a random chunk ${(toRandom / 1000).toFixed(3)}, ` +
    `to its 1st / 8th exact neighbour ${mean((t) => t[0]?.score ?? 0)} / ${mean((t) => t.at(-1)?.score ?? 0)}`
  );
}

async function runEmbedder(name: string, tree: string, definitions: readonly Definition[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-index-'));
  try {
    const embedder = makeEmbedder(name);
    const space = { embedderId: embedder.id, dimension: embedder.dimension };
    const exact = new ExactScan(embedder.dimension);
    const store = new CapturingStore(new EmbeddedVectorStore(join(dir, 'vector-index')), exact);
    console.log(`\n== ${name} embeddings: ${embedder.id}, dimension ${embedder.dimension}`);
    let t0 = performance.now();
    const summary = await ingestTree({ store, embedder }, { root: tree, repo: REPO, collection: 'bench' });
    const ingestS = seconds(t0);
    console.log(
      `ingest: ${summary.chunksAdded} chunks from ${summary.files} files in ${ingestS.toFixed(1)} s = ` +
        `${(summary.chunksAdded / ingestS).toFixed(0)} chunks/s (embedded store ${(store.storeMs / 1000).toFixed(1)} s of it)`,
    );
    t0 = performance.now();
    const again = await ingestTree({ store, embedder }, { root: tree, repo: REPO, collection: 'bench' });
    console.log(`re-ingest, nothing changed: ${again.chunksUnchanged} chunks unchanged in ${seconds(t0).toFixed(1)} s`);
    await store.close();

    const sample = Array.from({ length: QUERIES }, (_, i) => definitions[(i * 7919) % definitions.length]!);
    const queries = await embedder.embed(sample.map((d) => `where is ${d.name} defined?`), 'query');
    const queryFile = join(dir, 'queries.f32');
    const flat = new Float32Array(queries.length * embedder.dimension);
    queries.forEach((q, i) => flat.set(q, i * embedder.dimension));
    writeFileSync(queryFile, new Uint8Array(flat.buffer));

    const loadBefore = loadavg()[0]!;
    t0 = performance.now();
    const report = readerReport({ indexDir: join(dir, 'vector-index'), collection: 'bench', space, queryFile, hitsFile: join(dir, 'hits.jsonl'), limit: LIMIT, modes: MODES }, dir);
    const readerS = seconds(t0);

    const mem = (m: Memory) => `RSS ${MB(m.rss)}, JS heap ${MB(m.heapUsed)}, external ${MB(m.external)}, young generation ${MB(m.youngGeneration)}`;
    const grew = (m: Memory) => {
      const young = m.youngGeneration - report.before.youngGeneration;
      return `RSS +${MB(m.rss - report.before.rss)}; without the young generation's growth (+${MB(young)}) +${MB(m.rss - report.before.rss - young)}`;
    };
    console.log(
      `reader process (${readerS.toFixed(0)} s in all): cold load (first query) ${(report.coldLoadMs / 1000).toFixed(1)} s; ` +
        `machine load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after (2 cores: timings above ~2 are contended)`,
    );
    console.log(`  memory before opening the index: ${mem(report.before)}`);
    console.log(`  memory with the index loaded:    ${mem(report.loaded)}  (${grew(report.loaded)})`);
    console.log(`  memory after all queries:        ${mem(report.afterQueries)}  (${grew(report.afterQueries)})`);

    console.log(`queries at ${exact.size} chunks, top ${LIMIT} (${QUERIES} queries per line):`);
    let unfilteredTruth: ExactHit[][] = [];
    for (const mode of MODES) {
      const baselineMs: number[] = [];
      const truth = queries.map((q) => {
        const s = performance.now();
        const hits = exact.search(q, mode.filter, LIMIT);
        baselineMs.push(performance.now() - s);
        return hits;
      });
      if (mode.name === 'no filter') unfilteredTruth = truth;
      const index = report.modes[mode.name]!;
      const short = index.hits.filter((h, i) => h.length < truth[i]!.length).length;
      console.log(`  ${mode.name.padEnd(22)} embedded index ${fmt(index.ms)}   exact scan ${fmt(baselineMs)}`);
      console.log(
        `  ${''.padEnd(22)} p99 ratio ${(percentile(index.ms, 0.99) / percentile(baselineMs, 0.99)).toFixed(3)}, ` +
          `recall@${LIMIT} vs the exact scan ${recallAt(index.hits, truth).toFixed(4)}` +
          `${short > 0 ? `, ${short} queries with fewer results than the scan` : ''}`,
      );
    }
    const task = (hits: readonly { path: string; startLine: number; endLine: number }[][]) =>
      ((100 * sample.filter((d, i) => hits[i]!.some((h) => definedIn(d, h))).length) / sample.length).toFixed(1);
    console.log(
      `  "where is <function> defined?" finds the defining chunk in the top ${LIMIT}: ` +
        `embedded index ${task(report.modes['no filter']!.hits)}%, exact scan ${task(unfilteredTruth)}%`,
    );
    console.log(`  vectors: ${spaceStats(exact, queries, unfilteredTruth)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  await churn();
  const tree = mkdtempSync(join(tmpdir(), 'gw-bench-tree-'));
  try {
    const t0 = performance.now();
    const generated = generateTree(tree, CHUNKS);
    console.log(`generated ${generated.files} files (${generated.chunks} chunks) in ${seconds(t0).toFixed(1)} s`);
    for (const name of EMBEDDERS) await runEmbedder(name, tree, generated.definitions);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
  console.log(`\nbench took ${(seconds(started) / 60).toFixed(1)} min`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

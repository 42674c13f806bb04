import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { seededRandom as random } from '../src/domain/seeded-random';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLogger } from '../src/logger';
import { matchesPathPrefix } from '../src/retrieval/chunk-filter';
import { EmbeddedVectorStore } from '../src/retrieval/embedded-vector-store.adapter';
import { ingestTree } from '../src/retrieval/ingest';
import { LocalHashEmbedder } from '../src/retrieval/local-embedder.adapter';
import { VectorRetriever } from '../src/retrieval/vector-retriever';
import { VectorTable } from '../src/retrieval/vector-table';
import type { ChunkFilter, ChunkPayload, ChunkPoint, EmbeddingSpace, VectorStore } from '../src/retrieval/vector-store.port';

/**
 * Embedded retrieval at repository scale: a generated code base of BENCH_CHUNKS chunks
 * (default 50,000) is ingested with the local embedder into the embedded index, then
 * queried. Baseline in the same run: the textbook JS version of the same search (array of
 * objects with number[] vectors, cosine with norms per pair, score everything, filter
 * afterwards, sort everything) over the same vectors.
 *
 * At the end, the same search over dense model-sized vectors (BENCH_DENSE_DIMENSION).
 *
 *   npm run bench:build --silent && node dist-bench/bench/retrieval.bench.js
 *   BENCH_CHUNKS=10000 BENCH_QUERIES=300 node dist-bench/bench/retrieval.bench.js
 */
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 50_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const BASELINE_QUERIES = Number(process.env.BENCH_BASELINE_QUERIES ?? 100);
const LIMIT = 8;
/** Size of the dense vectors timed at the end (0 skips them). */
const DENSE_DIMENSION = Number(process.env.BENCH_DENSE_DIMENSION ?? 1536);

/** 300-line files cut into 60-line chunks with 10 lines overlap: 6 chunks per file. */
const LINES_PER_FILE = 300;
const CHUNKS_PER_FILE = 6;

const SERVICES = ['billing', 'identity', 'catalog', 'shipping', 'search', 'notifications', 'reporting', 'gateway'];
const LANGUAGES = [
  { ext: 'ts', language: 'typescript' },
  { ext: 'py', language: 'python' },
  { ext: 'go', language: 'go' },
  { ext: 'java', language: 'java' },
];


interface Definition {
  readonly name: string;
  readonly path: string;
  /** 1-based line of `function name(`. */
  readonly line: number;
}

/** Writes a code base of about `chunks` chunks and returns where each function is defined. */
function generateTree(root: string, chunks: number): Definition[] {
  const next = random(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const consonants = ['b', 'c', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'st', 'tr', 'ch'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
  const syllables = consonants.flatMap((c) => vowels.map((v) => c + v));
  const word = () => Array.from({ length: 2 + Math.floor(next() * 2) }, () => pick(syllables)).join('');
  const words = Array.from({ length: 3000 }, word);
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const verbs = ['parse', 'load', 'build', 'apply', 'resolve', 'compute', 'render', 'sync', 'validate', 'merge'];
  const definitions: Definition[] = [];
  const names: string[] = [];
  const taken = new Set<string>();
  const files = Math.ceil(chunks / CHUNKS_PER_FILE);
  for (let f = 0; f < files; f++) {
    const service = SERVICES[f % SERVICES.length]!;
    const { ext } = LANGUAGES[Math.floor(f / SERVICES.length) % LANGUAGES.length]!;
    const path = `services/${service}/${pick(['core', 'api', 'store', 'jobs'])}/${word()}_${f}.${ext}`;
    const lines: string[] = [];
    while (lines.length < LINES_PER_FILE) {
      let name: string;
      do name = `${pick(verbs)}${cap(pick(words))}${cap(pick(words))}`;
      while (taken.has(name));
      taken.add(name);
      definitions.push({ name, path, line: lines.length + 1 });
      lines.push(`export function ${name}(${pick(words)}: ${cap(pick(words))}): ${cap(pick(words))} {`);
      for (let i = 0; i < 10; i++) {
        const callee = names.length > 0 && next() < 0.3 ? pick(names) : `${pick(words)}.${pick(words)}`;
        lines.push(`  const ${pick(words)} = ${callee}(${pick(words)}, '${pick(words)} ${pick(words)}', ${Math.floor(next() * 1000)});`);
      }
      lines.push(`  return ${pick(words)};`, '}', '');
      names.push(name);
    }
    const text = lines.slice(0, LINES_PER_FILE).join('\n') + '\n';
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return definitions.filter((d) => d.line <= LINES_PER_FILE - 13);
}

/** Passes everything through, remembering the points and how long the store took. */
class TimedStore implements VectorStore {
  readonly points: ChunkPoint[] = [];
  storeMs = 0;
  constructor(private readonly inner: VectorStore) {}
  ensureCollection(c: string, s: EmbeddingSpace) {
    return this.inner.ensureCollection(c, s);
  }
  async upsert(c: string, s: EmbeddingSpace, points: readonly ChunkPoint[]) {
    this.points.push(...points);
    const t0 = performance.now();
    await this.inner.upsert(c, s, points);
    this.storeMs += performance.now() - t0;
  }
  deleteByIds(c: string, ids: readonly string[]) {
    return this.inner.deleteByIds(c, ids);
  }
  deleteFiles(c: string, repo: string, paths: readonly string[]) {
    return this.inner.deleteFiles(c, repo, paths);
  }
  setFileHash(c: string, ids: readonly string[], h: string) {
    return this.inner.setFileHash(c, ids, h);
  }
  listChunks(c: string, repo: string) {
    return this.inner.listChunks(c, repo);
  }
  search(c: string, s: EmbeddingSpace, v: Float32Array, f: ChunkFilter, k: number) {
    return this.inner.search(c, s, v, f, k);
  }
  close() {
    return this.inner.close();
  }
}

interface NaiveRow {
  readonly id: string;
  readonly vector: number[];
  readonly payload: ChunkPayload;
}

function naiveSearch(rows: readonly NaiveRow[], query: number[], filter: ChunkFilter, k: number) {
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return rows
    .map((r) => ({ r, score: r.vector.reduce((s, x, i) => s + x * query[i]!, 0) / (norm(r.vector) * norm(query) || 1) }))
    .filter(
      ({ r }) =>
        (filter.repo == null || r.payload.repo === filter.repo) &&
        (filter.language == null || r.payload.language === filter.language) &&
        (filter.pathPrefix == null || matchesPathPrefix(r.payload.path, filter.pathPrefix)),
    )
    .sort((a, b) => b.score - a.score)
    .slice(0, k);
}

async function timed(n: number, run: (i: number) => Promise<unknown> | unknown): Promise<{ p50: number; p99: number; mean: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await run(i);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: ms.reduce((a, b) => a + b, 0) / ms.length };
}

const fmt = (r: { p50: number; p99: number }) => `p50 ${r.p50.toFixed(2).padStart(8)} ms   p99 ${r.p99.toFixed(2).padStart(8)} ms`;

async function main(): Promise<void> {
  const tree = mkdtempSync(join(tmpdir(), 'gw-bench-tree-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-index-'));
  try {
    let t0 = performance.now();
    const definitions = generateTree(tree, CHUNKS);
    console.log(`generated ${Math.ceil(CHUNKS / CHUNKS_PER_FILE)} files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const embedder = new LocalHashEmbedder();
    const store = new TimedStore(new EmbeddedVectorStore(join(dataDir, 'vector-index')));
    t0 = performance.now();
    const summary = await ingestTree({ store, embedder }, { root: tree, repo: 'acme/platform', collection: 'bench' });
    const ingestS = (performance.now() - t0) / 1000;
    console.log(
      `ingest: ${summary.chunksAdded} chunks from ${summary.files} files in ${ingestS.toFixed(1)} s = ` +
        `${(summary.chunksAdded / ingestS).toFixed(0)} chunks/s (embedded store ${(store.storeMs / 1000).toFixed(1)} s of it, ` +
        `${(summary.chunksAdded / (store.storeMs / 1000)).toFixed(0)} chunks/s on its own)`,
    );
    t0 = performance.now();
    const again = await ingestTree({ store, embedder }, { root: tree, repo: 'acme/platform', collection: 'bench' });
    console.log(`re-ingest, nothing changed: ${again.chunksUnchanged} chunks unchanged in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // A fresh store, as a gateway starting up: the first search loads the collection.
    const reader = new EmbeddedVectorStore(join(dataDir, 'vector-index'));
    const space = { embedderId: embedder.id, dimension: embedder.dimension };
    const sample = Array.from({ length: QUERIES }, (_, i) => definitions[(i * 7919) % definitions.length]!);
    const queryVectors = await embedder.embed(sample.map((d) => d.name), 'query');
    t0 = performance.now();
    await reader.search('bench', space, queryVectors[0]!, {}, LIMIT);
    console.log(`cold load of ${summary.chunksAdded} chunks by a new reader: ${(performance.now() - t0).toFixed(0)} ms`);

    const filter: ChunkFilter = { repo: 'acme/platform', language: 'typescript', pathPrefix: 'services/billing' };
    const unfiltered = await timed(QUERIES, (i) => reader.search('bench', space, queryVectors[i]!, {}, LIMIT));
    const filtered = await timed(QUERIES, (i) => reader.search('bench', space, queryVectors[i]!, filter, LIMIT));
    const retriever = new VectorRetriever(embedder, reader, { orgScopedCollections: false, logger: createLogger('silent') });
    const endToEnd = await timed(QUERIES, (i) =>
      retriever.retrieve({ orgId: 'acme', collection: 'bench', query: `where is ${sample[i]!.name} defined?`, repo: null, language: null, pathPrefix: null, limit: LIMIT }),
    );

    const naive: NaiveRow[] = store.points.map((p) => ({ id: p.id, vector: Array.from(p.vector), payload: p.payload }));
    const naiveQueries = queryVectors.map((v) => Array.from(v));
    const baseline = await timed(BASELINE_QUERIES, (i) => naiveSearch(naive, naiveQueries[i]!, {}, LIMIT));
    const baselineFiltered = await timed(BASELINE_QUERIES, (i) => naiveSearch(naive, naiveQueries[i]!, filter, LIMIT));

    // The same answers, or the comparison means nothing.
    for (let i = 0; i < 20; i++) {
      const fast = (await reader.search('bench', space, queryVectors[i]!, filter, LIMIT)).map((h) => h.id);
      const slow = naiveSearch(naive, naiveQueries[i]!, filter, LIMIT).map((h) => h.r.id);
      if (fast.join() !== slow.join()) throw new Error(`results differ for query ${i}: ${fast} vs ${slow}`);
    }

    // How often a query naming a function finds the chunk that defines it.
    let found = 0;
    for (let i = 0; i < QUERIES; i++) {
      const d = sample[i]!;
      const hits = await reader.search('bench', space, queryVectors[i]!, {}, LIMIT);
      if (hits.some((h) => h.payload.path === d.path && h.payload.startLine <= d.line && d.line <= h.payload.endLine)) found++;
    }

    console.log(`\nqueries at ${summary.chunksAdded} chunks, dimension ${embedder.dimension}, top ${LIMIT}:`);
    console.log(`  embedded index, no filter:                      ${fmt(unfiltered)}`);
    console.log(`  embedded index, repo+language+path filter:      ${fmt(filtered)}`);
    console.log(`  retriever end to end (embed query + search):     ${fmt(endToEnd)}`);
    console.log(`  baseline naive JS scan, no filter:              ${fmt(baseline)}`);
    console.log(`  baseline naive JS scan, filter after scoring:   ${fmt(baselineFiltered)}`);
    console.log(`  speed-up at p50: ${(baseline.p50 / unfiltered.p50).toFixed(1)}x unfiltered, ${(baselineFiltered.p50 / filtered.p50).toFixed(1)}x filtered`);
    console.log(`  "where is <function> defined?" finds the defining chunk in the top ${LIMIT}: ${((100 * found) / QUERIES).toFixed(1)}% of ${QUERIES}`);
    await reader.close();
    await store.close();

    // Model embeddings are dense: every dimension of the query is read. Same row count,
    // random unit vectors of text-embedding-3-small's size, straight into a table.
    if (DENSE_DIMENSION > 0) {
      const next = random(9);
      const dense = new VectorTable(DENSE_DIMENSION, summary.chunksAdded);
      const row = new Float32Array(DENSE_DIMENSION);
      for (let i = 0; i < summary.chunksAdded; i++) {
        for (let j = 0; j < DENSE_DIMENSION; j++) row[j] = next() - 0.5;
        dense.upsert(`d${i}`, row, store.points[i]!.payload);
      }
      const denseQueries = Array.from({ length: 50 }, () => Float32Array.from({ length: DENSE_DIMENSION }, () => next() - 0.5));
      const denseResult = await timed(denseQueries.length, (i) => dense.search(denseQueries[i]!, {}, LIMIT));
      const denseFiltered = await timed(denseQueries.length, (i) => dense.search(denseQueries[i]!, filter, LIMIT));
      console.log(`  dense ${DENSE_DIMENSION}-dimension vectors (model embeddings), no filter: ${fmt(denseResult)}`);
      console.log(`  dense ${DENSE_DIMENSION}-dimension vectors, repo+language+path filter:  ${fmt(denseFiltered)}`);
    }
  } finally {
    rmSync(tree, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/logger';
import { chunkLines, sha256 } from '../../src/retrieval/chunking';
import { physicalCollection } from '../../src/retrieval/collection';
import { EmbeddedVectorStore } from '../../src/retrieval/embedded-vector-store.adapter';
import type { Embedder } from '../../src/retrieval/embedder.port';
import { ingestTree, type IngestProgress } from '../../src/retrieval/ingest';
import { LOCAL_EMBEDDER_DIMENSION, LocalHashEmbedder } from '../../src/retrieval/local-embedder.adapter';
import { RetrievalError } from '../../src/retrieval/retrieval-error';
import type { RetrievalRequest } from '../../src/retrieval/retrieval.port';
import { VectorRetriever } from '../../src/retrieval/vector-retriever';
import { RecordingEmbedder, removeTree, SAMPLE_CODE, writeTree } from '../support/source-tree';

const logger = createLogger('silent');
const bigFile = Array.from({ length: 200 }, (_, i) => `export const value${i + 1} = ${i + 1};`).join('\n') + '\n';

describe('ingest of a working tree into the embedded index', () => {
  let root: string;
  let dataDir: string;
  let store: EmbeddedVectorStore;
  let embedder: RecordingEmbedder;
  let retriever: VectorRetriever;
  const ask = (query: string, extra: Partial<RetrievalRequest> = {}) =>
    retriever.retrieve({ orgId: 'acme', collection: 'code', query, repo: 'acme/api', language: null, pathPrefix: null, limit: 8, ...extra });
  const ingest = (e: Embedder = embedder) => ingestTree({ store, embedder: e }, { root, repo: 'acme/api', collection: 'code' });

  beforeAll(() => {
    root = writeTree({
      ...SAMPLE_CODE,
      'long/big.ts': bigFile,
      '.gitignore': 'dist/\n*.log\nsecrets/*\n!secrets/README.md\n',
      'dist/bundle.js': 'export function parseInvoiceTotal() { return 0; }\n',
      'debug.log': 'parseInvoiceTotal failed\n',
      'secrets/key.txt': 'hunter2\n',
      'secrets/README.md': 'Keys live in the vault.\n',
      'nested/.gitignore': 'generated.ts\n',
      'nested/generated.ts': 'export const generated = true;\n',
      'nested/kept.ts': 'export const kept = true;\n',
      'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x1a, 0x0a]),
      'huge.txt': 'x'.repeat(1024 * 1024 + 1),
      'package-lock.json': '{ "lockfileVersion": 3 }\n',
    });
    symlinkSync(join(root, 'src/billing/invoice.ts'), join(root, 'link.ts'));
    dataDir = mkdtempSync(join(tmpdir(), 'gw-index-'));
    store = new EmbeddedVectorStore(dataDir);
    embedder = new RecordingEmbedder(new LocalHashEmbedder());
    retriever = new VectorRetriever(embedder, store, { orgScopedCollections: false, logger });
  });
  afterAll(async () => {
    await store.close();
    removeTree(root);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('indexes what git would track, skipping ignored, binary, generated, oversized and linked files', async () => {
    const summary = await ingest();
    const chunks = await store.listChunks('code', 'acme/api');
    const paths = [...new Set(chunks.map((c) => c.path))].sort();
    expect(paths).toEqual(
      [
        '.gitignore',
        'docs/guide.md',
        'long/big.ts',
        'nested/.gitignore',
        'nested/kept.ts',
        'secrets/README.md',
        'src/billing/invoice.ts',
        'src/billing/report.ts',
        'src/ui/primitives/button.tsx',
        'src/ui/theme.css',
      ].sort(),
    );
    expect(summary).toMatchObject({ files: 10, chunksAdded: chunks.length, chunksUnchanged: 0, chunksRemoved: 0, filesSkipped: 3 });
    expect(embedder.documents).toHaveLength(chunks.length);
    expect(chunks.filter((c) => c.path === 'long/big.ts')).toHaveLength(chunkLines(bigFile).length);
    expect(chunks.find((c) => c.path === 'src/billing/invoice.ts')?.fileHash).toBe(sha256(SAMPLE_CODE['src/billing/invoice.ts']!));
  });

  it('answers a question naming an identifier with the chunk that defines it, citing its lines and hashes', async () => {
    const [best] = await ask('where is parseInvoiceTotal defined?');
    expect(best).toMatchObject({
      ref: {
        path: 'src/billing/invoice.ts',
        startLine: 1,
        endLine: 7,
        fileContentHash: sha256(SAMPLE_CODE['src/billing/invoice.ts']!),
      },
      language: 'typescript',
    });
    expect(best!.text).toContain('export function parseInvoiceTotal(raw: string): number {');
    expect(best!.ref.contentHash).toBe(sha256(best!.text));
    expect(best!.ref.chunkId).toMatch(/^[0-9a-f-]{36}$/);
    expect(best!.ref.score).toBeGreaterThan(0);
  });

  it('scopes retrieval by repository, language and workspace path', async () => {
    const ui = await ask('PrimaryButton', { pathPrefix: 'src/ui' });
    expect(ui.length).toBeGreaterThan(0);
    expect(ui.every((c) => c.ref.path.startsWith('src/ui/'))).toBe(true);
    expect(ui[0]!.ref.path).toBe('src/ui/primitives/button.tsx');
    const css = await ask('primary button colour', { language: 'css' });
    expect(css.map((c) => c.ref.path)).toEqual(['src/ui/theme.css']);
    expect(await ask('parseInvoiceTotal', { repo: 'acme/other' })).toEqual([]);
    expect(await ask('parseInvoiceTotal', { limit: 2 })).toHaveLength(2);
  });

  it('re-embeds nothing when nothing changed', async () => {
    embedder.documents.length = 0;
    const before = await store.listChunks('code', 'acme/api');
    const summary = await ingest();
    expect(summary).toMatchObject({ files: 10, chunksAdded: 0, chunksUnchanged: before.length, chunksRemoved: 0 });
    expect(embedder.documents).toEqual([]);
  });

  it('after edits embeds only the changed chunks and deletes chunks of changed and removed files', async () => {
    const before = await store.listChunks('code', 'acme/api');
    embedder.documents.length = 0;
    // Line 155 sits in one or two of big.ts's overlapping chunks; the rest of big.ts is untouched.
    const edited = bigFile.replace('export const value155 = 155;', 'export const renamedValue = 155;');
    const oldHashes = new Set(chunkLines(bigFile).map((c) => c.contentHash));
    const touched = chunkLines(edited).filter((c) => !oldHashes.has(c.contentHash));
    expect(touched.length).toBeGreaterThanOrEqual(1);
    expect(touched.length).toBeLessThanOrEqual(2);
    expect(touched.every((c) => c.text.includes('renamedValue'))).toBe(true);
    writeFileSync(join(root, 'long/big.ts'), edited);
    unlinkSync(join(root, 'docs/guide.md'));
    writeFileSync(join(root, 'src/billing/refund.ts'), 'export function issueRefund(total: number) {\n  return -total;\n}\n');
    appendFileSync(join(root, '.gitignore'), 'nested/kept.ts\n');

    const summary = await ingest();
    const after = await store.listChunks('code', 'acme/api');
    // Embedded: the big.ts chunks around line 155, the new file, the edited .gitignore.
    expect(embedder.documents.map((t) => t.split('\n')[0]).sort()).toEqual(['.gitignore', ...touched.map(() => 'long/big.ts'), 'src/billing/refund.ts']);
    expect(embedder.documents.filter((t) => t.startsWith('long/big.ts\n')).every((t) => t.includes('renamedValue'))).toBe(true);
    // Removed: the old big.ts chunks, the old .gitignore, the deleted guide, the now-ignored kept.ts.
    const removed = touched.length + 3;
    expect(summary).toMatchObject({ files: 9, chunksAdded: touched.length + 2, chunksRemoved: removed, chunksUnchanged: before.length - removed });
    expect(after).toHaveLength(before.length - removed + touched.length + 2);
    expect(after.some((c) => c.path === 'docs/guide.md' || c.path === 'nested/kept.ts')).toBe(false);
    // Unchanged chunks of the edited file now belong to its new version.
    expect(new Set(after.filter((c) => c.path === 'long/big.ts').map((c) => c.fileHash))).toEqual(new Set([sha256(edited)]));

    const renamed = (await ask('renamedValue'))[0]!;
    expect(renamed.ref.path).toBe('long/big.ts');
    expect(renamed.text).toContain('export const renamedValue = 155;');
    expect((await ask('issueRefund'))[0]?.ref.path).toBe('src/billing/refund.ts');
    expect((await ask('Billing guide')).some((c) => c.ref.path === 'docs/guide.md')).toBe(false);
  });

  it('refuses a collection built by another embedder, for ingest and for retrieval', async () => {
    const other: Embedder = { id: 'other-embedder', dimension: 8, embed: async (texts) => texts.map(() => new Float32Array(8).fill(1)) };
    await expect(ingest(other)).rejects.toMatchObject({ kind: 'embedder-mismatch' });
    await expect(ingest(other)).rejects.toThrow(
      new RegExp(`holds vectors of local-hash-v1 \\(dimension ${LOCAL_EMBEDDER_DIMENSION}\\).*other-embedder \\(dimension 8\\)`),
    );
    const confused = new VectorRetriever(other, store, { orgScopedCollections: false, logger });
    await expect(
      confused.retrieve({ orgId: 'acme', collection: 'code', query: 'x', repo: null, language: null, pathPrefix: null, limit: 3 }),
    ).rejects.toMatchObject({ kind: 'embedder-mismatch' });
  });

  it('says a collection was never indexed, and refuses unusable names and inputs', async () => {
    await expect(ask('anything', { collection: 'never-indexed' })).rejects.toMatchObject({ kind: 'collection-missing' });
    await expect(ask('anything', { collection: '../escape' })).rejects.toMatchObject({ kind: 'bad-request' });
    await expect(ask('anything', { limit: 0 })).rejects.toMatchObject({ kind: 'bad-request' });
    expect(await ask('   ')).toEqual([]);
    await expect(ingestTree({ store, embedder }, { root, repo: ' ', collection: 'code' })).rejects.toBeInstanceOf(RetrievalError);
    await expect(ingestTree({ store, embedder }, { root: join(root, 'nope'), repo: 'r', collection: 'code' })).rejects.toMatchObject({
      kind: 'bad-request',
    });
    expect(await store.listChunks('never-indexed', 'acme/api')).toEqual([]);
  });

  it('with org-scoped collections, one org cannot read another org\'s index by naming it', async () => {
    const scoped = new VectorRetriever(embedder, store, { orgScopedCollections: true, logger });
    await ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: physicalCollection(true, 'acme', 'shared-name') });
    const request = { collection: 'shared-name', query: 'parseInvoiceTotal', repo: null, language: null, pathPrefix: null, limit: 3 };
    expect((await scoped.retrieve({ ...request, orgId: 'acme' }))[0]?.ref.path).toBe('src/billing/invoice.ts');
    await expect(scoped.retrieve({ ...request, orgId: 'globex' })).rejects.toMatchObject({ kind: 'collection-missing' });
  });

  it('records --language for every file when given', async () => {
    const languageRoot = writeTree({ 'a.txt': 'alpha beta\n', 'b.weird': 'gamma delta\n' });
    try {
      await ingestTree({ store, embedder }, { root: languageRoot, repo: 'labelled', collection: 'code', language: 'cobol' });
      const hits = await retriever.retrieve({ orgId: 'acme', collection: 'code', query: 'alpha gamma', repo: 'labelled', language: 'cobol', pathPrefix: null, limit: 5 });
      expect(hits.map((h) => [h.ref.path, h.language]).sort()).toEqual([
        ['a.txt', 'cobol'],
        ['b.weird', 'cobol'],
      ]);
      expect(readFileSync(join(languageRoot, 'a.txt'), 'utf8')).toBe('alpha beta\n');
    } finally {
      removeTree(languageRoot);
    }
  });

  it('reports progress after every file and every embedded batch, ending at the summary\'s totals', async () => {
    const seen: IngestProgress[] = [];
    const summary = await ingestTree({ store, embedder }, { root, repo: 'acme/progress', collection: 'code', batchSize: 2, onProgress: (p) => seen.push(p) });
    const filesTotal = seen[0]!.filesTotal;
    expect(filesTotal).toBeGreaterThanOrEqual(summary.files); // listed files include binary ones, read and then skipped
    expect(seen).toHaveLength(filesTotal + Math.ceil(summary.chunksAdded / 2));
    expect(seen.at(-1)).toEqual({ filesDone: filesTotal, filesTotal, chunksEmbedded: summary.chunksAdded });
    for (const [i, p] of seen.entries()) {
      expect(p.filesTotal).toBe(filesTotal);
      if (i === 0) continue;
      const before = seen[i - 1]!;
      // Each report is one more file read or one more batch of (at most) two chunks stored.
      const step = [p.filesDone - before.filesDone, p.chunksEmbedded - before.chunksEmbedded];
      expect([[1, 0], [0, 2], [0, 1]]).toContainEqual(step);
    }
  });
});

describe('chunk ids follow content across re-ingests', () => {
  /** 2,000+ lines of 15-line functions, each with a distinct name. */
  const longFile = Array.from({ length: 140 }, (_, i) =>
    [`export function step${i}(input: number) {`, ...Array.from({ length: 11 }, (_, j) => `  const part${j} = input * ${i * 100 + j};`), '  return input;', '}', ''].join('\n'),
  ).join('\n');
  let root: string;
  let dataDir: string;
  let store: EmbeddedVectorStore;
  let embedder: RecordingEmbedder;
  const ingest = () => ingestTree({ store, embedder }, { root, repo: 'acme/api', collection: 'ids' });
  const idsOf = async (path: string) => (await store.listChunks('ids', 'acme/api')).filter((c) => c.path === path).map((c) => c.id);

  beforeEach(() => {
    root = writeTree({ 'src/long.ts': longFile });
    dataDir = mkdtempSync(join(tmpdir(), 'gw-ids-'));
    store = new EmbeddedVectorStore(dataDir);
    embedder = new RecordingEmbedder(new LocalHashEmbedder());
  });
  afterEach(async () => {
    await store.close();
    removeTree(root);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('inserting one line at the top of a 2,000-line file re-embeds one chunk; the rest keep their ids and cite their new lines', async () => {
    expect(longFile.split('\n').length).toBeGreaterThan(2000);
    const first = await ingest();
    expect(first.chunksAdded).toBeGreaterThan(40);
    const before = await idsOf('src/long.ts');
    const retriever = new VectorRetriever(embedder, store, { orgScopedCollections: false, logger });
    const ask = async () =>
      (await retriever.retrieve({ orgId: 'acme', collection: 'ids', query: 'where is step120 defined?', repo: 'acme/api', language: null, pathPrefix: null, limit: 1 }))[0]!;
    const cited = await ask();

    embedder.documents.length = 0;
    writeFileSync(join(root, 'src/long.ts'), `// Copyright header\n${longFile}`);
    const second = await ingest();
    // Before content-derived ids every chunk of the file was embedded again.
    expect(embedder.documents).toHaveLength(1);
    expect(embedder.documents[0]).toContain('// Copyright header');
    expect(second).toMatchObject({ chunksAdded: 1, chunksRemoved: 1, chunksUnchanged: first.chunksAdded - 1 });
    const after = await idsOf('src/long.ts');
    expect(after.filter((id) => !before.includes(id))).toHaveLength(1);
    // What a turn recorded (its chunkId) still names the live chunk, now one line further down.
    const again = await ask();
    expect(again.ref).toMatchObject({ chunkId: cited.ref.chunkId, contentHash: cited.ref.contentHash, startLine: cited.ref.startLine + 1, endLine: cited.ref.endLine + 1 });
    expect(again.ref.fileContentHash).toBe(sha256(`// Copyright header\n${longFile}`));
    // And so after a restart: the moved lines were written down, not only kept in memory.
    await store.close();
    store = new EmbeddedVectorStore(dataDir);
    const restarted = new VectorRetriever(embedder, store, { orgScopedCollections: false, logger });
    const fresh = await restarted.retrieve({ orgId: 'acme', collection: 'ids', query: 'where is step120 defined?', repo: 'acme/api', language: null, pathPrefix: null, limit: 1 });
    expect(fresh[0]!.ref).toEqual(again.ref);
  });

  it('gives identical chunks in one file and in two files distinct ids that survive a re-ingest', async () => {
    const repeated = `${longFile.split('\n').slice(0, 30).join('\n')}\n`.repeat(8);
    writeTree({ 'src/twice.ts': repeated, 'src/copy.ts': repeated }, root);
    await ingest();
    const twice = await idsOf('src/twice.ts');
    const copy = await idsOf('src/copy.ts');
    const all = await store.listChunks('ids', 'acme/api');
    expect(new Set(all.map((c) => c.id)).size).toBe(all.length);
    expect(twice.some((id) => copy.includes(id))).toBe(false);
    embedder.documents.length = 0;
    writeFileSync(join(root, 'src/twice.ts'), `// moved down\n${repeated}`);
    await ingest();
    const twiceAfter = await idsOf('src/twice.ts');
    expect(embedder.documents.length).toBeLessThanOrEqual(2);
    expect(twiceAfter.filter((id) => twice.includes(id)).length).toBeGreaterThanOrEqual(twice.length - 2);
    expect(new Set(twiceAfter).size).toBe(twiceAfter.length);
  });
});

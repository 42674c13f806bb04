import { readFile, stat } from 'node:fs/promises';
import { chunkLines, DEFAULT_CHUNKING, identifyChunks, sha256, type ChunkingOptions } from './chunking';
import { assertCollectionName } from './collection';
import type { Embedder } from './embedder.port';
import { RetrievalError } from './retrieval-error';
import { isBinary, languageOf, listSourceFiles } from './source-tree';
import type { ChunkPlacement, ChunkPoint, EmbeddingSpace, IndexedChunk, VectorStore } from './vector-store.port';

export interface IngestOptions {
  /** The working tree to index. */
  readonly root: string;
  readonly repo: string;
  /** The physical collection (see physicalCollection). */
  readonly collection: string;
  /** Recorded for every file instead of the language guessed from its extension. */
  readonly language?: string | null;
  readonly maxFileBytes?: number;
  readonly chunking?: ChunkingOptions;
  /** Chunks embedded and stored per round trip. */
  readonly batchSize?: number;
  /** Called after each file and each embedded batch. */
  readonly onProgress?: (progress: IngestProgress) => void;
}

export interface IngestProgress {
  /** Files read (indexed, unchanged or skipped) of the files listed. */
  readonly filesDone: number;
  readonly filesTotal: number;
  /** New chunks embedded and stored so far. */
  readonly chunksEmbedded: number;
}

export interface IngestSummary {
  /** Text files indexed (unchanged ones included). */
  readonly files: number;
  readonly chunksAdded: number;
  readonly chunksUnchanged: number;
  readonly chunksRemoved: number;
  /** Binary, generated and oversized files. */
  readonly filesSkipped: number;
  readonly seconds: number;
}

export const MAX_FILE_BYTES = 1024 * 1024;

/**
 * Indexes a working tree into a collection, incrementally: a file whose hash is unchanged
 * costs nothing, a changed file re-embeds only the chunks whose content (and so id) is new
 * (chunk boundaries follow content, so an edit changes the chunks around it only; chunks
 * that merely moved get their new lines), and chunks of changed, removed, ignored or
 * now-binary files are deleted. New
 * chunks are stored before stale ones are deleted, so a search during an ingest never
 * finds a file missing. The CLI (`npm run ingest`) and CI ("index on commit") both call this.
 */
export async function ingestTree(deps: { store: VectorStore; embedder: Embedder }, options: IngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const { store, embedder } = deps;
  const repo = options.repo.trim();
  if (repo === '') throw new RetrievalError('bad-request', 'a repository name is needed');
  const collection = assertCollectionName(options.collection);
  if (!(await stat(options.root).catch(() => null))?.isDirectory()) {
    throw new RetrievalError('bad-request', `${options.root} is not a directory`);
  }
  const chunking = options.chunking ?? DEFAULT_CHUNKING;
  const batchSize = options.batchSize ?? 128;
  const space: EmbeddingSpace = { embedderId: embedder.id, dimension: embedder.dimension };

  await store.ensureCollection(collection, space);
  const indexed = groupByPath(await store.listChunks(collection, repo));
  const listing = await listSourceFiles(options.root, options.maxFileBytes ?? MAX_FILE_BYTES);

  let files = 0;
  let filesSkipped = listing.skipped;
  let chunksAdded = 0;
  let chunksUnchanged = 0;
  let chunksRemoved = 0;
  const stale: string[] = [];
  const seen = new Set<string>();
  let pending: { id: string; payload: ChunkPoint['payload'] }[] = [];
  let filesDone = 0;
  const report = () => options.onProgress?.({ filesDone, filesTotal: listing.files.length, chunksEmbedded: chunksAdded });

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    // The path leads the text: file and directory names say a lot about what code is for.
    const vectors = await embedder.embed(
      batch.map((p) => `${p.payload.path}\n${p.payload.text}`),
      'document',
    );
    await store.upsert(
      collection,
      space,
      batch.map((p, i) => ({ id: p.id, vector: vectors[i]!, payload: p.payload })),
    );
    chunksAdded += batch.length;
    report();
  };

  for (const file of listing.files) {
    const content = await readFile(file.absolutePath);
    if (isBinary(content)) {
      filesSkipped++;
    } else {
      files++;
      seen.add(file.path);
      const fileHash = sha256(content);
      const before = indexed.get(file.path) ?? [];
      if (before.length > 0 && before.every((c) => c.fileHash === fileHash)) {
        chunksUnchanged += before.length;
      } else {
        const language = options.language ?? languageOf(file.path);
        const beforeIds = new Set(before.map((c) => c.id));
        const kept: ChunkPlacement[] = [];
        const now = new Set<string>();
        for (const chunk of identifyChunks(repo, file.path, chunkLines(content.toString('utf8'), chunking))) {
          const { id, startLine, endLine, contentHash, text } = chunk;
          now.add(id);
          if (beforeIds.has(id)) {
            // Same text, same vector: only its lines may have moved.
            kept.push({ id, startLine, endLine });
            continue;
          }
          pending.push({ id, payload: { repo, path: file.path, startLine, endLine, language, contentHash, fileHash, text } });
          if (pending.length >= batchSize) await flush();
        }
        chunksUnchanged += kept.length;
        await store.placeChunks(collection, fileHash, kept);
        for (const c of before) if (!now.has(c.id)) stale.push(c.id);
      }
    }
    filesDone++;
    report();
  }
  await flush();

  await store.deleteByIds(collection, stale);
  chunksRemoved += stale.length;
  const gone = [...indexed.keys()].filter((path) => !seen.has(path));
  if (gone.length > 0) {
    await store.deleteFiles(collection, repo, gone);
    for (const path of gone) chunksRemoved += indexed.get(path)?.length ?? 0;
  }
  return {
    files,
    chunksAdded,
    chunksUnchanged,
    chunksRemoved,
    filesSkipped,
    seconds: (performance.now() - started) / 1000,
  };
}

function groupByPath(chunks: readonly IndexedChunk[]): Map<string, IndexedChunk[]> {
  const byPath = new Map<string, IndexedChunk[]>();
  for (const chunk of chunks) {
    const list = byPath.get(chunk.path);
    if (list) list.push(chunk);
    else byPath.set(chunk.path, [chunk]);
  }
  return byPath;
}

export const formatSummary = (s: IngestSummary): string =>
  `${s.files} files, ${s.chunksAdded} chunks added, ${s.chunksUnchanged} unchanged, ${s.chunksRemoved} removed` +
  `${s.filesSkipped ? `, ${s.filesSkipped} files skipped (binary, generated or too large)` : ''} in ${s.seconds.toFixed(1)} s`;

import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { normalizePathPrefix, normalizePathPrefixes, pathPrefixesOf } from './chunk-filter';
import { spaceMismatch, vectorNameOf } from './collection';
import { RetrievalError } from './retrieval-error';
import type { ChunkFilter, ChunkPayload, ChunkPlacement, ChunkPoint, EmbeddingSpace, IndexedChunk, ScoredChunk, VectorStore } from './vector-store.port';

export interface QdrantOptions {
  readonly url: string;
  readonly apiKey: string | null;
  readonly timeoutMs: number;
}

/** Payload fields filtered on; each gets a keyword index so filters stay fast at any size. */
const INDEXED_FIELDS = ['repo', 'path', 'language', 'pathPrefixes'] as const;
const SCROLL_PAGE = 1000;
/** Points (or operations) per delete or payload request. */
const DELETE_BATCH = 500;

/**
 * Qdrant as the vector store. The embedder that filled a collection is recorded in the
 * collection itself: its vectors are a named vector called after the embedder, of the
 * embedder's dimension, so a gateway configured with another embedder is refused by name
 * and size instead of searching a foreign vector space. Path scoping uses a `pathPrefixes`
 * payload array (every directory of the path and the path), matched by value, which is the
 * segment-wise prefix match the embedded index also implements.
 */
export class QdrantVectorStore implements VectorStore {
  private readonly client: QdrantClient;
  /** Collections already checked against an embedder in this process ("collection vector:size"). */
  private readonly verified = new Set<string>();

  constructor(options: QdrantOptions) {
    this.client = new QdrantClient({
      url: options.url,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      checkCompatibility: false,
      timeout: options.timeoutMs,
    });
  }

  /** False when the collection does not exist; throws when it holds another embedder's vectors. */
  private async hasCollection(collection: string, space: EmbeddingSpace): Promise<boolean> {
    if (this.verified.has(verifiedKey(collection, space))) return true;
    const { exists } = await this.client.collectionExists(collection);
    if (!exists) return false;
    const info = await this.client.getCollection(collection);
    const vectors = info.config.params.vectors;
    const name = vectorNameOf(space.embedderId);
    const mine = vectors && !isSingleVector(vectors) ? vectors[name] : undefined;
    if (!mine || mine.size !== space.dimension) throw spaceMismatch(collection, describeVectors(vectors), space);
    this.verified.add(verifiedKey(collection, space));
    return true;
  }

  async ensureCollection(collection: string, space: EmbeddingSpace): Promise<void> {
    if (await this.hasCollection(collection, space)) return;
    try {
      await this.client.createCollection(collection, {
        vectors: { [vectorNameOf(space.embedderId)]: { size: space.dimension, distance: 'Cosine' } },
      });
    } catch (e) {
      // Another ingest created it first: fine if it did so for the same embedder.
      if (await this.hasCollection(collection, space)) return;
      throw e;
    }
    for (const field of INDEXED_FIELDS) {
      await this.client.createPayloadIndex(collection, { field_name: field, field_schema: 'keyword', wait: true });
    }
    this.verified.add(verifiedKey(collection, space));
  }

  async upsert(collection: string, space: EmbeddingSpace, points: readonly ChunkPoint[]): Promise<void> {
    if (points.length === 0) return;
    const name = vectorNameOf(space.embedderId);
    await this.client.upsert(collection, {
      wait: true,
      points: points.map((p) => ({
        id: p.id,
        vector: { [name]: Array.from(p.vector) },
        payload: { ...p.payload, pathPrefixes: pathPrefixesOf(p.payload.path) },
      })),
    });
  }

  async deleteByIds(collection: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      await this.client.delete(collection, { wait: true, points: ids.slice(i, i + DELETE_BATCH) });
    }
  }

  async deleteFiles(collection: string, repo: string, paths: readonly string[]): Promise<void> {
    for (let i = 0; i < paths.length; i += DELETE_BATCH) {
      await this.client.delete(collection, {
        wait: true,
        filter: { must: [{ key: 'repo', match: { value: repo } }, { key: 'path', match: { any: paths.slice(i, i + DELETE_BATCH) } }] },
      });
    }
  }

  async placeChunks(collection: string, fileHash: string, placements: readonly ChunkPlacement[]): Promise<void> {
    // Each chunk may have moved to other lines: one set_payload per point, batched per request.
    for (let i = 0; i < placements.length; i += DELETE_BATCH) {
      await this.client.batchUpdate(collection, {
        wait: true,
        operations: placements.slice(i, i + DELETE_BATCH).map((p) => ({
          set_payload: { payload: { fileHash, startLine: p.startLine, endLine: p.endLine }, points: [p.id] },
        })),
      });
    }
  }

  async listChunks(collection: string, repo: string): Promise<IndexedChunk[]> {
    const out: IndexedChunk[] = [];
    let offset: Schemas['ExtendedPointId'] | undefined;
    do {
      const page = await this.client.scroll(collection, {
        filter: { must: [{ key: 'repo', match: { value: repo } }] },
        limit: SCROLL_PAGE,
        with_payload: ['path', 'fileHash'],
        with_vector: false,
        ...(offset === undefined ? {} : { offset }),
      });
      for (const point of page.points) {
        const path = point.payload?.path;
        const fileHash = point.payload?.fileHash;
        if (typeof path === 'string') out.push({ id: String(point.id), path, fileHash: typeof fileHash === 'string' ? fileHash : '' });
      }
      const next = page.next_page_offset;
      offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
    } while (offset !== undefined);
    return out;
  }

  async search(
    collection: string,
    space: EmbeddingSpace,
    vector: Float32Array,
    filter: ChunkFilter,
    limit: number,
  ): Promise<ScoredChunk[]> {
    if (!(await this.hasCollection(collection, space))) {
      throw new RetrievalError('collection-missing', `vector collection "${collection}" has not been indexed yet`);
    }
    const qdrantFilter = toQdrantFilter(filter);
    try {
      const res = await this.client.query(collection, {
        query: Array.from(vector),
        using: vectorNameOf(space.embedderId),
        limit,
        with_payload: true,
        ...(qdrantFilter ? { filter: qdrantFilter } : {}),
      });
      const out: ScoredChunk[] = [];
      for (const point of res.points) {
        const payload = toPayload(point.payload);
        // Points written by another indexer without our fields cannot be cited; leave them out.
        if (payload) out.push({ id: String(point.id), score: point.score, payload });
      }
      return out;
    } catch (e) {
      // The collection may have been dropped or rebuilt since it was checked.
      this.verified.delete(verifiedKey(collection, space));
      throw e;
    }
  }

  async close(): Promise<void> {
    this.verified.clear();
  }
}

const verifiedKey = (collection: string, space: EmbeddingSpace) => `${collection} ${vectorNameOf(space.embedderId)}:${space.dimension}`;

/** The request's filters as a Qdrant filter; undefined when nothing is filtered. */
export function toQdrantFilter(filter: ChunkFilter): Schemas['Filter'] | undefined {
  const must: Schemas['FieldCondition'][] = [];
  if (filter.repo != null) must.push({ key: 'repo', match: { value: filter.repo } });
  if (filter.language != null) must.push({ key: 'language', match: { value: filter.language } });
  const prefix = normalizePathPrefix(filter.pathPrefix);
  if (prefix !== null) must.push({ key: 'pathPrefixes', match: { value: prefix } });
  // Every point's payload lists its path's prefixes, so "under any of these" is one MatchAny on that keyword field.
  const scope = normalizePathPrefixes(filter.pathPrefixes);
  if (scope !== null) must.push({ key: 'pathPrefixes', match: { any: scope } });
  return must.length > 0 ? { must } : undefined;
}

type VectorsConfig = Schemas['VectorsConfig'] | undefined;

function isSingleVector(vectors: NonNullable<VectorsConfig>): vectors is Schemas['VectorParams'] {
  return typeof (vectors as { size?: unknown }).size === 'number';
}

function describeVectors(vectors: VectorsConfig): string {
  if (!vectors) return 'no dense vectors';
  if (isSingleVector(vectors)) return `unnamed vectors of dimension ${vectors.size}`;
  const named = Object.entries(vectors).map(([name, params]) => `${name} (dimension ${params?.size ?? '?'})`);
  return named.length > 0 ? `vectors ${named.join(', ')}` : 'no dense vectors';
}

function toPayload(raw: Record<string, unknown> | null | undefined): ChunkPayload | null {
  if (!raw) return null;
  const { repo, path, startLine, endLine, language, contentHash, fileHash, text } = raw;
  if (
    typeof repo !== 'string' ||
    typeof path !== 'string' ||
    typeof startLine !== 'number' ||
    typeof endLine !== 'number' ||
    typeof contentHash !== 'string' ||
    typeof text !== 'string'
  ) {
    return null;
  }
  return {
    repo,
    path,
    startLine,
    endLine,
    language: typeof language === 'string' ? language : null,
    contentHash,
    fileHash: typeof fileHash === 'string' ? fileHash : '',
    text,
  };
}

/**
 * Port: where chunk vectors live. Adapters: Qdrant (QDRANT_URL) and the embedded index
 * under DATA_DIR. Both honour the same filter semantics (see chunk-filter.ts) and refuse a
 * collection whose vectors come from another embedder (see collection.ts).
 */

/** What is stored with every vector. Never a WorkspaceId: that is request-only (spec 001 section 4). */
export interface ChunkPayload {
  readonly repo: string;
  /** Repository-relative, forward slashes. */
  readonly path: string;
  /** 1-based, inclusive. */
  readonly startLine: number;
  readonly endLine: number;
  readonly language: string | null;
  /** SHA-256 (hex) of `text`. */
  readonly contentHash: string;
  /** SHA-256 (hex) of the whole file at indexing time. */
  readonly fileHash: string;
  readonly text: string;
}

export interface ChunkPoint {
  readonly id: string;
  /** L2-normalised, of the collection's dimension. */
  readonly vector: Float32Array;
  readonly payload: ChunkPayload;
}

export interface ScoredChunk {
  readonly id: string;
  /** Cosine similarity. */
  readonly score: number;
  readonly payload: ChunkPayload;
}

/** What an ingest needs to know about what is already indexed, without vectors or text. */
export interface IndexedChunk {
  readonly id: string;
  readonly path: string;
  readonly fileHash: string;
}

/** Where an unchanged chunk now sits in a new version of its file. */
export interface ChunkPlacement {
  readonly id: string;
  readonly startLine: number;
  readonly endLine: number;
}

/** Every field is optional; a null or absent field does not filter. */
export interface ChunkFilter {
  readonly repo?: string | null;
  readonly language?: string | null;
  /** A path or directory, matched on whole path segments (normalizePathPrefix). */
  readonly pathPrefix?: string | null;
  /** Paths or directories, matched like pathPrefix; a chunk under any of them passes (both fields: it must pass both). */
  readonly pathPrefixes?: readonly string[] | null;
}

/** The vector space a collection was built in. */
export interface EmbeddingSpace {
  readonly embedderId: string;
  readonly dimension: number;
}

export interface VectorStore {
  /** Creates the collection for `space`, or checks that the existing one was built in it. */
  ensureCollection(collection: string, space: EmbeddingSpace): Promise<void>;
  upsert(collection: string, space: EmbeddingSpace, points: readonly ChunkPoint[]): Promise<void>;
  deleteByIds(collection: string, ids: readonly string[]): Promise<void>;
  /** Removes every chunk of these files of one repository. */
  deleteFiles(collection: string, repo: string, paths: readonly string[]): Promise<void>;
  /**
   * Records that unchanged chunks (same id, same text, same vector) now belong to a new
   * version of their file, at these lines.
   */
  placeChunks(collection: string, fileHash: string, placements: readonly ChunkPlacement[]): Promise<void>;
  /** Every chunk of one repository, without vectors or text. */
  listChunks(collection: string, repo: string): Promise<IndexedChunk[]>;
  /**
   * Optional, for a store that can tell without a round trip: throws collection-missing when
   * the collection has not been indexed, so the retriever does not embed a query (a provider
   * call) only to learn that nothing can be searched.
   */
  checkIndexed?(collection: string): Promise<void>;
  /** Exact or approximate nearest neighbours by cosine similarity, best first. */
  search(
    collection: string,
    space: EmbeddingSpace,
    vector: Float32Array,
    filter: ChunkFilter,
    limit: number,
  ): Promise<ScoredChunk[]>;
  close(): Promise<void>;
}

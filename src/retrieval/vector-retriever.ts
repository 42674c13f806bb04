import type { Logger } from '../logger';
import { physicalCollection } from './collection';
import type { Embedder } from './embedder.port';
import { isRetrievalError, RetrievalError } from './retrieval-error';
import type { RetrievalRequest, RetrievedChunk, Retriever } from './retrieval.port';
import type { EmbeddingSpace, VectorStore } from './vector-store.port';

/** Instructions can be huge (1 MB); what they ask about is in the first few thousand characters. */
const MAX_QUERY_CHARS = 8000;
const MAX_LIMIT = 100;

export interface VectorRetrieverOptions {
  /** RETRIEVAL_ORG_SCOPED_COLLECTIONS: read `<orgId>__<collection>` instead of `<collection>`. */
  readonly orgScopedCollections: boolean;
  readonly logger: Logger;
}

/**
 * The Retriever the orchestrator calls: embed the instruction, search the agent context's
 * collection with the request's repo/language/path filters, hand back refs and texts. Any
 * failure is a RetrievalError whose message is fit for a turn warning; what actually went
 * wrong is logged here.
 */
export class VectorRetriever implements Retriever {
  private readonly space: EmbeddingSpace;

  constructor(
    private readonly embedder: Embedder,
    private readonly store: VectorStore,
    private readonly options: VectorRetrieverOptions,
  ) {
    this.space = { embedderId: embedder.id, dimension: embedder.dimension };
  }

  async retrieve(request: RetrievalRequest): Promise<RetrievedChunk[]> {
    if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > MAX_LIMIT) {
      throw new RetrievalError('bad-request', `retrieval limit must be between 1 and ${MAX_LIMIT}`);
    }
    const query = request.query.slice(0, MAX_QUERY_CHARS);
    if (query.trim() === '') return [];
    const collection = physicalCollection(this.options.orgScopedCollections, request.orgId, request.collection);
    try {
      await this.store.checkIndexed?.(collection);
      const [vector] = await this.embedder.embed([query], 'query');
      if (!vector) throw new RetrievalError('unavailable', 'the embedder returned no vector');
      const hits = await this.store.search(
        collection,
        this.space,
        vector,
        { repo: request.repo, language: request.language, pathPrefix: request.pathPrefix, pathPrefixes: request.pathPrefixes ?? null },
        request.limit,
      );
      return hits.map((hit) => ({
        ref: {
          chunkId: hit.id,
          path: hit.payload.path,
          startLine: hit.payload.startLine,
          endLine: hit.payload.endLine,
          contentHash: hit.payload.contentHash,
          score: hit.score,
          fileContentHash: hit.payload.fileHash || null,
        },
        text: hit.payload.text,
        language: hit.payload.language,
      }));
    } catch (e) {
      if (isRetrievalError(e)) {
        if (e.kind !== 'collection-missing') this.options.logger.warn({ err: e, collection }, 'retrieval failed');
        throw e;
      }
      this.options.logger.warn({ err: e, collection }, 'retrieval failed');
      throw new RetrievalError('unavailable', 'retrieval is unavailable: the vector store or the embedding provider did not answer', {
        cause: e,
      });
    }
  }
}

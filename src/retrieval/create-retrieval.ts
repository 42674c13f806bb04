import { join } from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Embedder } from './embedder.port';
import { EmbeddedVectorStore } from './embedded-vector-store.adapter';
import { LocalHashEmbedder } from './local-embedder.adapter';
import type { Retriever } from './retrieval.port';
import { VectorRetriever } from './vector-retriever';
import type { VectorStore } from './vector-store.port';

type OpenAIEmbedderModule = typeof import('./openai-embedder.adapter');
type QdrantModule = typeof import('./qdrant-vector-store.adapter');

export interface Retrieval {
  readonly retriever: Retriever;
  readonly embedder: Embedder;
  readonly store: VectorStore;
  /** Which adapters configuration picked, for start-up logs and the ingest summary. */
  readonly description: { readonly store: string; readonly embedder: string };
  close(): Promise<void>;
}

/**
 * Picks the retrieval adapters from configuration: Qdrant when QDRANT_URL is set, else the
 * embedded index under DATA_DIR; OpenAI embeddings when OPENAI_API_KEY is set, else the
 * local hashing embedder. The composition root and the ingest CLI both build it here; the
 * CLI allows each call more time than a turn can wait (RETRIEVAL_TIMEOUT_MS). The OpenAI and
 * Qdrant clients are imported only when configured (each costs memory in every instance).
 */
export function createRetrieval(config: Config, logger: Logger, overrides: { readonly timeoutMs?: number } = {}): Retrieval {
  const r = { ...config.retrieval, ...overrides };
  const embedder: Embedder = config.openaiApiKey
    ? new (require('./openai-embedder.adapter') as OpenAIEmbedderModule).OpenAIEmbedder({
        apiKey: config.openaiApiKey,
        baseURL: config.openaiBaseUrl,
        organization: config.openaiOrganization,
        project: config.openaiProject,
        model: r.embeddingModel,
        dimensions: r.embeddingDimensions,
        timeoutMs: r.timeoutMs,
      })
    : new LocalHashEmbedder();
  const store: VectorStore = r.qdrantUrl
    ? new (require('./qdrant-vector-store.adapter') as QdrantModule).QdrantVectorStore({ url: r.qdrantUrl, apiKey: r.qdrantApiKey, timeoutMs: r.timeoutMs })
    : new EmbeddedVectorStore(join(config.dataDir, 'vector-index'));
  const retriever = new VectorRetriever(embedder, store, {
    orgScopedCollections: r.orgScopedCollections,
    logger: logger.child({ component: 'retrieval' }),
  });
  return {
    retriever,
    embedder,
    store,
    description: {
      store: r.qdrantUrl ? `qdrant at ${new URL(r.qdrantUrl).host}` : `embedded index in ${join(config.dataDir, 'vector-index')}`,
      embedder: `${embedder.id} (dimension ${embedder.dimension})`,
    },
    close: () => store.close(),
  };
}

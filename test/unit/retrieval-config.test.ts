import { ConfigError, loadConfig } from '../../src/config';

describe('retrieval configuration', () => {
  it('defaults to the embedded index, the local embedder and 8 chunks per instruction', () => {
    const c = loadConfig({});
    expect(c.openaiApiKey).toBeNull();
    expect(c.retrieval).toEqual({
      qdrantUrl: null,
      qdrantApiKey: null,
      embeddingModel: 'text-embedding-3-small',
      embeddingDimensions: null,
      topK: 8,
      timeoutMs: 5000,
      orgScopedCollections: true,
    });
  });

  it('reads every retrieval variable', () => {
    const c = loadConfig({
      QDRANT_URL: 'https://qdrant.internal:6333',
      QDRANT_API_KEY: 'secret',
      OPENAI_API_KEY: 'sk-x',
      OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1',
      OPENAI_EMBEDDING_MODEL: 'text-embedding-3-large',
      OPENAI_EMBEDDING_DIMENSIONS: '1024',
      RETRIEVAL_TOP_K: '12',
      RETRIEVAL_TIMEOUT_MS: '2500',
      RETRIEVAL_ORG_SCOPED_COLLECTIONS: 'false',
    });
    expect([c.openaiApiKey, c.openaiBaseUrl]).toEqual(['sk-x', 'http://127.0.0.1:9999/v1']);
    expect(c.retrieval).toEqual({
      qdrantUrl: 'https://qdrant.internal:6333',
      qdrantApiKey: 'secret',
      embeddingModel: 'text-embedding-3-large',
      embeddingDimensions: 1024,
      topK: 12,
      timeoutMs: 2500,
      orgScopedCollections: false,
    });
  });

  it.each([
    ['QDRANT_URL', 'localhost:6333'],
    ['RETRIEVAL_TOP_K', '0'],
    ['RETRIEVAL_TOP_K', '101'],
    ['OPENAI_EMBEDDING_DIMENSIONS', 'big'],
    ['RETRIEVAL_ORG_SCOPED_COLLECTIONS', 'yes please'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

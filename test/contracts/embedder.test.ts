import { LocalHashEmbedder } from '../../src/retrieval/local-embedder.adapter';
import { OpenAIEmbedder } from '../../src/retrieval/openai-embedder.adapter';
import { startFakeOpenAI } from '../support/fake-openai';
import { embedderContract } from './embedder.contract';

describe('embedder: local hashing embedder', () => embedderContract(async () => ({ embedder: new LocalHashEmbedder(), dispose: async () => {} })));

describe('embedder: OpenAI embeddings adapter against the provider stand-in', () =>
  embedderContract(async () => {
    const provider = await startFakeOpenAI();
    const embedder = new OpenAIEmbedder({ apiKey: 'sk-test', baseURL: provider.url, model: 'text-embedding-3-small', dimensions: 256, timeoutMs: 5000 });
    return { embedder, dispose: () => provider.close() };
  }));

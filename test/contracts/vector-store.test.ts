import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedVectorStore } from '../../src/retrieval/embedded-vector-store.adapter';
import { QdrantVectorStore } from '../../src/retrieval/qdrant-vector-store.adapter';
import { FakeQdrant } from '../support/fake-qdrant';
import { vectorStoreContract } from './vector-store.contract';

describe('vector store: embedded, on disk', () =>
  vectorStoreContract(async () => {
    const root = mkdtempSync(join(tmpdir(), 'gw-vectors-'));
    const store = new EmbeddedVectorStore(root);
    return {
      store,
      async dispose() {
        await store.close();
        rmSync(root, { recursive: true, force: true });
      },
    };
  }));

describe('vector store: Qdrant, against the Qdrant REST stand-in', () =>
  vectorStoreContract(async () => {
    const qdrant = new FakeQdrant();
    const store = new QdrantVectorStore({ url: await qdrant.start(), apiKey: null, timeoutMs: 2000 });
    return {
      store,
      async dispose() {
        await store.close();
        await qdrant.stop();
      },
    };
  }));

import { text } from 'node:stream/consumers';
import { BlobStoreUnavailableError, type BlobStore } from '../../src/blobs/blob-store.port';
import { fileBlobKey, turnBlobKey } from '../../src/domain/blob-keys';

export interface BlobStoreSubject {
  readonly store: BlobStore;
  dispose: () => Promise<void>;
}

/**
 * What the orchestrator and GET /blobs need of every blob store (DD-005). `unreachable`, for
 * adapters that can be cut off, opens one whose backend cannot be reached.
 */
export function blobStoreContract(open: () => Promise<BlobStoreSubject>, options: { unreachable?: () => BlobStoreSubject } = {}): void {
  let store: BlobStore;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await open());
  });
  afterAll(() => dispose());

  it('stores and returns text and bytes exactly, with content type and size', async () => {
    const key = turnBlobKey('acme', 'session-1', 'turn-1', 'answer.md');
    const body = `# Ünïcödé answer 🚀\n${'line\n'.repeat(5000)}`;
    await store.put(key, body, 'text/markdown; charset=utf-8');
    expect(await store.getText(key)).toBe(body);
    const object = await store.get(key);
    expect(object?.contentType).toBe('text/markdown; charset=utf-8');
    expect(object?.sizeBytes).toBe(Buffer.byteLength(body));
    expect(await text(object!.body)).toBe(body);
    await store.put(key, Buffer.from('replaced'), 'text/markdown; charset=utf-8');
    expect(await store.getText(key)).toBe('replaced');
  });

  it('answers null for a missing object and pings when usable', async () => {
    expect(await store.get(fileBlobKey('acme', 'session-1', 'f'.repeat(64)))).toBeNull();
    expect(await store.getText('orgs/acme/nothing/here.json')).toBeNull();
    await expect(store.ping()).resolves.toBeUndefined();
  });

  const { unreachable } = options;
  if (unreachable) {
    it('reports an unreachable backend as BlobStoreUnavailableError on every call, never as a missing object', async () => {
      const down = unreachable();
      try {
        await expect(down.store.put('k.json', '{}', 'application/json')).rejects.toBeInstanceOf(BlobStoreUnavailableError);
        await expect(down.store.getText('k.json')).rejects.toBeInstanceOf(BlobStoreUnavailableError);
        await expect(down.store.get('k.json')).rejects.toBeInstanceOf(BlobStoreUnavailableError);
        await expect(down.store.ping()).rejects.toBeInstanceOf(BlobStoreUnavailableError);
      } finally {
        await down.dispose();
      }
    });
  }
}

import { mkdtempSync, rmSync } from 'node:fs';
import { text } from 'node:stream/consumers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobStoreUnavailableError } from '../../src/blobs/blob-store.port';
import { FilesystemBlobStore } from '../../src/blobs/filesystem.adapter';
import { S3BlobStore } from '../../src/blobs/s3.adapter';
import { SqliteBlobStore } from '../../src/blobs/sqlite.adapter';
import { turnBlobKey } from '../../src/domain/blob-keys';
import { createLogger } from '../../src/logger';
import { InMemoryBlobStore } from '../support/in-memory-ports';
import { startLocalS3, type LocalS3 } from '../support/s3';
import { blobStoreContract } from './blob-store.contract';

describe('filesystem blob store', () => {
  blobStoreContract(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-blobs-'));
    return { store: new FilesystemBlobStore(dir), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  });

  it('refuses a key that would leave its directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-blobs-'));
    try {
      await expect(new FilesystemBlobStore(dir).put('../escape.txt', 'x', 'text/plain')).rejects.toThrow('escapes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('embedded SQLite blob store', () => {
  const silent = createLogger('silent');
  blobStoreContract(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-blobs-'));
    const store = new SqliteBlobStore(dir, silent);
    return {
      store,
      dispose: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  it('still serves objects stored as files before it existed, and keeps what it stores across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-blobs-'));
    try {
      const old = turnBlobKey('acme', 'session-1', 'turn-1', 'answer.md');
      await new FilesystemBlobStore(dir).put(old, 'an answer from before', 'text/markdown; charset=utf-8');
      const fresh = turnBlobKey('acme', 'session-1', 'turn-2', 'answer.md');
      const first = new SqliteBlobStore(dir, silent);
      await first.put(fresh, 'a new answer', 'text/markdown; charset=utf-8');
      await first.close();
      await expect(first.getText(fresh)).rejects.toBeInstanceOf(BlobStoreUnavailableError);

      const reopened = new SqliteBlobStore(dir, silent);
      expect(await reopened.getText(old)).toBe('an answer from before');
      const object = await reopened.get(old);
      expect(object?.sizeBytes).toBe(Buffer.byteLength('an answer from before'));
      expect(await text(object!.body)).toBe('an answer from before');
      expect(await reopened.getText(fresh)).toBe('a new answer');
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('S3 blob store against s3rver', () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startLocalS3();
  });
  afterAll(() => s3.close());

  const s3Store = (endpoint: string) => {
    const store = new S3BlobStore({ bucket: s3.bucket, endpoint, region: 'us-east-1', forcePathStyle: true });
    return { store, dispose: async () => store.destroy() };
  };
  blobStoreContract(async () => s3Store(s3.endpoint), { unreachable: () => s3Store('http://127.0.0.1:9') });

  it('reports a missing bucket on ping', async () => {
    const wrong = new S3BlobStore({ bucket: 'no-such-bucket', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true });
    await expect(wrong.ping()).rejects.toThrow();
    wrong.destroy();
  });
});

describe('in-memory blob store of the orchestrator tests', () => {
  blobStoreContract(async () => ({ store: new InMemoryBlobStore(), dispose: async () => {} }), {
    unreachable: () => {
      const store = new InMemoryBlobStore();
      store.down = true;
      return { store, dispose: async () => {} };
    },
  });
});

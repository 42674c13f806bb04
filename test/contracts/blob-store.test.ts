import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilesystemBlobStore } from '../../src/blobs/filesystem.adapter';
import { S3BlobStore } from '../../src/blobs/s3.adapter';
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

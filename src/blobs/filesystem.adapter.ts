import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import { contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';

/** The embedded default: objects as files under DATA_DIR/blobs (no S3 configured). */
export class FilesystemBlobStore implements BlobStore {
  private readonly root: string;
  /** Directories known to exist: a turn writes several objects into one, and mkdir is not free. */
  private readonly made = new Set<string>();

  constructor(dataDir: string) {
    this.root = resolve(dataDir, 'blobs');
  }

  /** Content types follow from the key's extension on read, so none is stored. */
  async put(key: string, body: string | Buffer, _contentType?: string): Promise<void> {
    const path = this.pathOf(key);
    const dir = dirname(path);
    if (!this.made.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.made.add(dir);
    }
    // Write then rename: a reader never sees half an object.
    const temporary = `${path}.${randomUUID()}.tmp`;
    await writeFile(temporary, body);
    await rename(temporary, path);
  }

  async get(key: string): Promise<BlobObject | null> {
    const path = this.pathOf(key);
    try {
      const info = await stat(path);
      return { body: createReadStream(path), contentType: contentTypeOf(key), sizeBytes: info.size };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async getText(key: string): Promise<string | null> {
    try {
      return await readFile(this.pathOf(key), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async ping(): Promise<void> {
    await mkdir(this.root, { recursive: true });
  }

  private pathOf(key: string): string {
    const path = resolve(join(this.root, key));
    if (!path.startsWith(this.root + sep)) throw new Error(`blob key escapes the blob directory: ${key}`);
    return path;
  }
}

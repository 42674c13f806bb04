import { createReadStream, mkdir as mkdirCallback, rename as renameCallback, writeFile as writeFileCallback } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';

// Writes use the callback API: fs/promises opens a FileHandle per file (an object with a
// finalizer, and one promise per step), which cost more main-thread time per small blob than
// the write itself; a turn writes four or five.
const writeFile = promisify(writeFileCallback);
const rename = promisify(renameCallback);
const mkdir = promisify(mkdirCallback);

/** The embedded default: objects as files under DATA_DIR/blobs (no S3 configured). */
export class FilesystemBlobStore implements BlobStore {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = resolve(dataDir, 'blobs');
  }

  /** Content types follow from the key's extension on read, so none is stored. */
  async put(key: string, body: string | Buffer, _contentType?: string): Promise<void> {
    const path = this.pathOf(key);
    // Write then rename: a reader never sees half an object.
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, body);
    } catch (e) {
      // The first object of a turn makes its directory (no set of known directories to grow forever).
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      await mkdir(dirname(path), { recursive: true });
      await writeFile(temporary, body);
    }
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

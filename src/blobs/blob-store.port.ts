import type { Readable } from 'node:stream';
import { UnavailableError } from '../domain/errors';

export interface BlobObject {
  readonly body: Readable;
  readonly contentType: string;
  readonly sizeBytes: number | null;
}

/**
 * Port: where full payloads live (DD-005): instructions, answers, raw provider payloads and
 * active-file versions. Adapters: S3 and the local filesystem. Keys come from domain/blob-keys.ts.
 */
export interface BlobStore {
  put(key: string, body: string | Buffer, contentType: string): Promise<void>;
  /** The object, or null when there is none under `key`. */
  get(key: string): Promise<BlobObject | null>;
  /** The object as UTF-8 text, or null when there is none. */
  getText(key: string): Promise<string | null>;
  /** Throws when the store cannot be used (readiness). */
  ping(): Promise<void>;
}

/**
 * Thrown by adapters when the store itself is unreachable (not when an object is missing):
 * SERVICE_UNAVAILABLE to clients; `reason` (which bucket, which host) goes to logs only.
 */
export class BlobStoreUnavailableError extends UnavailableError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super('blob store', reason, options);
    this.name = 'BlobStoreUnavailableError';
  }
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown; charset=utf-8',
  json: 'application/json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/** Content type by the key's extension; keys without one hold file versions (text). */
export function contentTypeOf(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return (dot > 0 ? CONTENT_TYPES[name.slice(dot + 1)] : undefined) ?? CONTENT_TYPES.txt!;
}

import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadBucketCommand, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { BlobStoreUnavailableError, contentTypeOf, type BlobObject, type BlobStore } from './blob-store.port';

export interface S3BlobStoreOptions {
  readonly bucket: string;
  /** Set for MinIO / s3rver / other S3-compatible stores; unset means AWS. */
  readonly endpoint: string | null;
  readonly region: string;
  readonly forcePathStyle: boolean;
}

/**
 * S3 (or any S3-compatible store). Credentials come from the SDK's default chain (the
 * standard AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN / AWS_PROFILE ...).
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      // Without these the SDK frames bodies with trailing checksums that S3-compatible stores may keep verbatim.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: string | Buffer, contentType: string): Promise<void> {
    await this.call(() =>
      this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: body, ContentType: contentType })),
    );
  }

  async get(key: string): Promise<BlobObject | null> {
    try {
      const out = await this.call(() => this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key })));
      return {
        body: out.Body as Readable,
        contentType: out.ContentType ?? contentTypeOf(key),
        sizeBytes: out.ContentLength ?? null,
      };
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async getText(key: string): Promise<string | null> {
    try {
      const out = await this.call(() => this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key })));
      return out.Body ? await out.Body.transformToString('utf8') : '';
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async ping(): Promise<void> {
    await this.call(() => this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket })));
  }

  destroy(): void {
    this.client.destroy();
  }

  /** Network failures become BlobStoreUnavailableError; S3's own answers pass through. */
  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (e) {
      if (e instanceof S3ServiceException) throw e;
      throw new BlobStoreUnavailableError(`the blob store (S3 bucket ${this.options.bucket}) is unreachable`, { cause: e });
    }
  }
}

const isMissing = (e: unknown): boolean =>
  e instanceof NoSuchKey || (e instanceof S3ServiceException && (e.name === 'NoSuchKey' || e.$metadata.httpStatusCode === 404));

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface LocalS3 {
  readonly endpoint: string;
  readonly bucket: string;
  /** The gateway's S3 settings for this store. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** s3rver on a free port with one bucket; the SDK's standard credential variables point at it. */
export async function startLocalS3(bucket = 'gateway-blobs'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'gw-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  // s3rver's well-known development credentials; the gateway reads them through the SDK's default chain.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: { S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: 'true' },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

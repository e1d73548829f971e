/**
 * A local S3-compatible server (s3rver) for tests of the s3 storage adapter: a random port, a
 * fresh temp directory and one bucket; `stop` closes it and removes the directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import type { StorageConfig } from '../../src/config.js';

export interface LocalS3 {
  /** Settings that reach the server, as STORAGE_TYPE=s3 with S3_* would give them. */
  config: Extract<StorageConfig, { kind: 's3' }>;
  /** The server's directory: where its objects (and unfinished multipart parts) are kept. */
  dir: string;
  stop(): Promise<void>;
}

export async function startLocalS3(bucket = 'switchyard-test'): Promise<LocalS3> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    // s3rver accepts any credentials; path-style because the bucket is not a DNS name here.
    config: {
      kind: 's3',
      bucket,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      forcePathStyle: true,
    },
    dir,
    async stop() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A local S3-compatible server (s3rver) for tests of the s3 storage adapter: a random port, a
 * fresh temp directory and one bucket; `stop` closes it and removes the directory.
 */
import { mkdtemp, rm, unlink } from 'node:fs/promises';
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
  keepFoldersOnDelete(server);
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

/**
 * s3rver removes a key's parent folders on delete once they are empty. A put under the same prefix
 * at that moment has made the folder and not yet opened its file; the open then fails with ENOENT on
 * a write stream s3rver gives no error listener, which crashes the test process. A delete here
 * removes only the key's own files: an empty folder lists no keys, so nothing a test sees changes.
 */
function keepFoldersOnDelete(server: S3rver): void {
  const { store } = server;
  store.deleteObject = async (bucket, key) => {
    const files = (['object', 'object.md5', 'metadata.json'] as const).map((resource) => store.getResourcePath(bucket, key, resource));
    await Promise.all(
      files.map((file) =>
        unlink(file).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        }),
      ),
    );
  };
}

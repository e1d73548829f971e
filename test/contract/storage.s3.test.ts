import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/adapters/index.js';
import { startLocalS3, type LocalS3 } from '../support/s3-server.js';
import { storageContract } from './storage.contract.js';

let server: LocalS3;
let admin: S3Client;
beforeAll(async () => {
  server = await startLocalS3();
  admin = new S3Client(server.config);
});
afterAll(async () => {
  admin?.destroy();
  await server?.stop();
});

let buckets = 0;
storageContract('s3 (s3rver)', async () => {
  // A new bucket per test: every fixture starts empty.
  const bucket = `contract-${++buckets}`;
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  const storage = await openStorage({ ...server.config, bucket });
  return {
    storage,
    // s3rver implements neither listing nor aborting multipart uploads, so parts cannot be checked here.
    leftovers: async () => [],
    cleanup: async () => {
      await storage.close();
    },
  };
});

describe('S3Storage', () => {
  it('rejects a put the store refuses, and stops reading the body', async () => {
    const storage = await openStorage({ ...server.config, bucket: 'no-such-bucket' });
    let produced = 0;
    const body = Readable.from(
      (function* () {
        // 64 MB if read to the end: the put must give up long before.
        for (let i = 0; i < 1024; i++) {
          produced += 64 * 1024;
          yield Buffer.alloc(64 * 1024, i % 256);
        }
      })(),
    );
    await expect(storage.put('k', body)).rejects.toThrow(/bucket/i);
    expect(produced).toBeLessThan(64 * 1024 * 1024);
    expect(body.destroyed).toBe(true);
    await storage.close();
  });
});

import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
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

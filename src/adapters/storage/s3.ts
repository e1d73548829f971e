/**
 * Storage in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...). A put goes through
 * `@aws-sdk/lib-storage`'s Upload: one PutObject for a small body, a multipart upload in parts of
 * PART_SIZE for a big one (at most QUEUE_SIZE parts in memory at a time). S3 makes an object
 * visible only once its PutObject or CompleteMultipartUpload succeeds, so a failed or aborted put
 * shows nothing; its multipart upload is aborted so that no parts are left billed.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertStorageKey, type Storage, type StoredObject } from '../../ports/storage.js';

/** The S3 minimum part size; with QUEUE_SIZE parts in flight, a put holds at most ~20 MB. */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 4;

export interface S3StorageOptions {
  bucket: string;
  /** Unset: AWS's endpoint for the region. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default credential chain (environment, profile, instance role...). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO and most self-hosted stores). */
  forcePathStyle: boolean;
}

export class S3Storage implements Storage {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      credentials: options.credentials,
      forcePathStyle: options.forcePathStyle,
    });
  }

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<{ bytes: number }> {
    assertStorageKey(key);
    options.signal?.throwIfAborted();
    let bytes = 0;
    const counted = new PassThrough();
    counted.on('data', (chunk: Buffer) => (bytes += chunk.length));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: counted },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    const onAbort = () => void upload.abort().catch(() => {});
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // A failing source destroys `counted` with its error, so the SDK never sees an end and never
    // completes a truncated object; a failing upload stops the feeding the same way. Whichever
    // fails first is the cause; the other's error is only its echo.
    let cause: { error: unknown } | null = null;
    const firstFailure = (e: unknown) => {
      cause ??= { error: e };
    };
    const feeding = pipeline(body, counted, { signal: options.signal }).catch(firstFailure);
    const uploading = upload.done().catch((e: unknown) => {
      firstFailure(e);
      counted.destroy(e instanceof Error ? e : new Error(String(e)));
    });
    try {
      await Promise.all([feeding, uploading]);
      if (cause) {
        await upload.abort().catch(() => {});
        throw (cause as { error: unknown }).error;
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    return { bytes };
  }

  async get(key: string): Promise<StoredObject | null> {
    assertStorageKey(key);
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(answer.Body instanceof Readable)) throw new Error('the S3 client answered a body that is not a Node stream');
      return { body: answer.Body, size: answer.ContentLength ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async head(key: string): Promise<{ size: number } | null> {
    assertStorageKey(key);
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: answer.ContentLength ?? 0 };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    // S3's DeleteObject succeeds on a missing key: idempotent as the port asks.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function isNotFound(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata.httpStatusCode === 404);
}

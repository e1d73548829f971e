/**
 * The object-storage port: the bytes of uploaded files, under string keys. Bodies are streamed in
 * and out, never held whole in memory. A `put` is atomic for readers: until it has finished, the
 * key answers what it answered before (nothing, or the previous object); a put that fails or is
 * aborted leaves nothing of itself visible.
 *
 * Keys are `/`-separated relative paths of safe characters (`[A-Za-z0-9._-]` segments that do not
 * start with `.`, leaving dot names to adapters' own use); uploads use the content-addressed layout of `uploadKey`. Adapters: local
 * directory (src/adapters/storage/local.ts) and S3-compatible (src/adapters/storage/s3.ts); both
 * pass test/contract/storage.contract.ts.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  /** The object's bytes; the caller reads it to the end or destroys it. */
  body: Readable;
  /** Its size in bytes. */
  size: number;
}

export interface Storage {
  /**
   * Streams `body` to `key`, replacing what was there once it has been written whole; answers the
   * bytes written. Rejects (and keeps nothing) when `body` errors or `signal` aborts.
   */
  put(key: string, body: Readable, options?: { signal?: AbortSignal }): Promise<{ bytes: number }>;
  /** The object under `key`, or null when there is none. */
  get(key: string): Promise<StoredObject | null>;
  /** The size of the object under `key`, or null when there is none. */
  head(key: string): Promise<{ size: number } | null>;
  /** Removes the object under `key`; idempotent (a missing key is not an error). */
  delete(key: string): Promise<void>;
  /** Releases the adapter's resources. */
  close(): Promise<void>;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/** The content-addressed key of an upload: `uploads/<first two hex of sha256>/<sha256>`. */
export function uploadKey(sha256: string): string {
  if (!SHA256_HEX.test(sha256)) throw new Error('an upload key needs a lowercase hex SHA-256');
  return `uploads/${sha256.slice(0, 2)}/${sha256}`;
}

/** Throws unless `key` is a safe relative key (see the module comment); adapters call it first. */
export function assertStorageKey(key: string): void {
  if (!KEY.test(key) || key.length > 1024) {
    throw new Error(`invalid storage key: ${JSON.stringify(key)}`);
  }
}

/** The part of s3rver's API (it ships no types) that test/support/s3-server.ts uses. */
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string }[];
  }

  /** Its filesystem store: where objects are kept (one file per key, with .md5 and metadata.json beside it). */
  interface FilesystemStore {
    getResourcePath(bucket: string, key: string, resource: 'object' | 'object.md5' | 'metadata.json'): string;
    deleteObject(bucket: string, key: string): Promise<void>;
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    store: FilesystemStore;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
}

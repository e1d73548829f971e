/**
 * What an upload is, measured while it streams to storage: its size (refused past MAX_FILE_SIZE
 * or the tenant's storage quota the moment a byte goes past it), its SHA-256, and its first bytes
 * for type detection. Nothing but the head is kept in memory.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { PayloadTooLargeError } from '../errors.js';
import { DETECT_HEAD_BYTES } from './detect.js';

export interface UploadLimits {
  /** MAX_FILE_SIZE. */
  maxBytes: number;
  /** Bytes left of the tenant's storage quota (null: unlimited). */
  quotaLeft: number | null;
}

/** "20 MB" for messages (binary units, as the size settings read them). */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

export const fileTooLarge = (maxBytes: number) =>
  new PayloadTooLargeError(`the file is larger than the largest upload allowed, ${formatBytes(maxBytes)} (${maxBytes} bytes; the MAX_FILE_SIZE setting)`, 'file_too_large', 'file');

export const quotaExceeded = (quota: number) =>
  new PayloadTooLargeError(`the upload would take the tenant's files past its storage quota of ${formatBytes(quota)} (${quota} bytes; storage_quota_bytes in the tenant settings)`, 'storage_quota_exceeded', 'file');

export class UploadMeter extends Transform {
  bytes = 0;
  private readonly hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headBytes = 0;

  constructor(
    private readonly limits: UploadLimits,
    /** The quota itself, for the message. */
    private readonly quota: number | null,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) return done(fileTooLarge(this.limits.maxBytes));
    if (this.limits.quotaLeft !== null && this.bytes > this.limits.quotaLeft) return done(quotaExceeded(this.quota ?? 0));
    this.hash.update(chunk);
    if (this.headBytes < DETECT_HEAD_BYTES) {
      const part = chunk.subarray(0, DETECT_HEAD_BYTES - this.headBytes);
      this.headChunks.push(Buffer.from(part)); // a copy: the chunk's memory may be reused
      this.headBytes += part.length;
    }
    done(null, chunk);
  }

  /** The first bytes (up to DETECT_HEAD_BYTES). */
  head(): Buffer {
    return Buffer.concat(this.headChunks);
  }

  /** Hex SHA-256 of everything that went through (call once, at the end). */
  sha256(): string {
    return this.hash.digest('hex');
  }
}

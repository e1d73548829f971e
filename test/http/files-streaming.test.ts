/**
 * A large upload streams through every front server (RELAY_HTTP_SERVER lean, node, fastify) to
 * storage without being buffered: 50 MB sent as a stream (never held whole by the client either),
 * while this process's RSS is sampled; the stored object has the right size and hash. Embedded,
 * local storage. (An upload is never a JSON body: the relay front hands it to fastify, whose
 * multipart parser streams it.)
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadKey } from '../../src/ports/storage.js';
import { startApp, type RunningApp } from '../support/app.js';

const SIZE = 50 * 1024 * 1024;
const CHUNK = 256 * 1024;

/** A multipart body (purpose, then a SIZE-byte binary file) produced chunk by chunk. */
function multipartStream(boundary: string): { body: ReadableStream<Uint8Array>; sha256: string } {
  const chunk = Buffer.alloc(CHUNK);
  for (let i = 0; i < CHUNK; i++) chunk[i] = i % 251; // NULs included: a binary file, not a text to process
  const hash = createHash('sha256');
  for (let sent = 0; sent < SIZE; sent += CHUNK) hash.update(chunk.subarray(0, Math.min(CHUNK, SIZE - sent)));
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nchat\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const whole = new Uint8Array(chunk);
  let sent = -1;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent < 0) {
        controller.enqueue(Buffer.from(head));
        sent = 0;
      } else if (sent < SIZE) {
        const n = Math.min(CHUNK, SIZE - sent);
        controller.enqueue(n === CHUNK ? whole : new Uint8Array(chunk.subarray(0, n))); // the same bytes each time: no garbage on the client side
        sent += n;
      } else {
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
        controller.close();
      }
    },
  });
  return { body, sha256: hash.digest('hex') };
}

describe.each(['fastify', 'node', 'lean'] as const)('a 50 MB upload through the %s front', (front) => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ RELAY_HTTP_SERVER: front, MAX_FILE_SIZE: '64MB', FILE_PROCESSING_ENGINE: 'none', HEALTH_CHECK_ENABLED: 'false' });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** Uploads SIZE bytes as a stream; answers the JSON, the file's sha256, and the RSS growth seen meanwhile (MB). */
  async function uploadLarge(): Promise<{ status: number; json: Record<string, unknown>; sha256: string; grownMb: number }> {
    const boundary = `----sy${Math.random().toString(16).slice(2)}`;
    const { body, sha256 } = multipartStream(boundary);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    try {
      const res = await fetch(`${s.url}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.userToken}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit);
      return { status: res.status, json: (await res.json()) as Record<string, unknown>, sha256, grownMb: (peak - baseline) / 1024 / 1024 };
    } finally {
      clearInterval(sampler);
    }
  }

  it('is streamed to storage: stored whole, while memory stays flat', async () => {
    // The first upload grows the heap to its working size (garbage of passing chunks before a GC runs).
    const first = await uploadLarge();
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    const { status, json, sha256, grownMb } = await uploadLarge();
    expect(status, JSON.stringify(json)).toBe(201);
    expect(json).toMatchObject({ bytes: SIZE, sha256, mime_type: 'application/octet-stream', status: 'uploaded' });
    expect(await s.app.ctx.files.storage.head(uploadKey(sha256))).toEqual({ size: SIZE });
    // Buffered whole, an upload would add 50 MB or more; the first may grow the heap a little (measured: 4-23 MB), later ones not at all (< 1 MB).
    expect(first.grownMb, `RSS grew by ${first.grownMb.toFixed(1)} MB during the first upload`).toBeLessThan(40);
    expect(grownMb, `RSS grew by ${grownMb.toFixed(1)} MB during the second upload`).toBeLessThan(10);
  });
});

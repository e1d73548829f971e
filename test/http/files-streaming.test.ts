/**
 * A large upload streams through every front server (RELAY_HTTP_SERVER lean, node, fastify) to
 * storage without being buffered: 50 MB sent as a stream (never held whole by the client either),
 * while this process's RSS is sampled; the stored object has the right size and hash. Embedded,
 * local storage. The upload is larger than the 32 MB limit of bodies read whole (bodyLimitOf): an
 * upload is never such a body (the relay front hands it to fastify, whose multipart parser streams it).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadKey } from '../../src/ports/storage.js';
import { startApp, type RunningApp } from '../support/app.js';

const SIZE = 50 * 1024 * 1024;
const CHUNK = 256 * 1024;

/**
 * A multipart body (purpose, then a SIZE-byte binary file) produced chunk by chunk; with `holdAt`,
 * it stops after that many file bytes until `hold` resolves.
 */
function multipartStream(boundary: string, holdAt = Infinity, hold: Promise<void> = Promise.resolve()): { body: ReadableStream<Uint8Array>; sha256: string } {
  const chunk = Buffer.alloc(CHUNK);
  for (let i = 0; i < CHUNK; i++) chunk[i] = i % 251; // NULs included: a binary file, not a text to process
  const hash = createHash('sha256');
  for (let sent = 0; sent < SIZE; sent += CHUNK) hash.update(chunk.subarray(0, Math.min(CHUNK, SIZE - sent)));
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nchat\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const whole = new Uint8Array(chunk);
  let sent = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= holdAt) await hold;
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
  async function uploadLarge(holdAt?: number, hold?: Promise<void>): Promise<{ status: number; json: Record<string, unknown>; sha256: string; grownMb: number }> {
    const boundary = `----sy${Math.random().toString(16).slice(2)}`;
    const { body, sha256 } = multipartStream(boundary, holdAt, hold);
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

  /** Bytes written so far by the storage's puts in progress under tmp/ (the local adapter's temp files). */
  const tmpBytes = (): number => {
    const dir = join(s.dataDir, 'storage', 'tmp');
    if (!existsSync(dir)) return 0;
    return readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).size, 0);
  };

  it('is streamed to storage: stored whole, while memory stays flat', async () => {
    // While the client holds back the second half, the first half is already in storage: nothing waits for the whole body.
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const first = uploadLarge(SIZE / 2, hold);
    const deadline = Date.now() + 30_000;
    while (tmpBytes() < SIZE / 2 - 4 * 1024 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const writtenWhileHeld = tmpBytes();
    release();
    expect(writtenWhileHeld, 'bytes in storage while the client held back the second half').toBeGreaterThanOrEqual(SIZE / 2 - 4 * 1024 * 1024);
    const done = await first;
    expect(done.status, JSON.stringify(done.json)).toBe(201);

    // Memory: the first upload grew the heap to its working size; another one adds nothing.
    const { status, json, sha256, grownMb } = await uploadLarge();
    expect(status, JSON.stringify(json)).toBe(201);
    expect(json).toMatchObject({ bytes: SIZE, sha256, mime_type: 'application/octet-stream', status: 'uploaded' });
    expect(await s.app.ctx.files.storage.head(uploadKey(sha256))).toEqual({ size: SIZE });
    // Measured: < 1 MB (the first upload: 4-60 MB, as garbage of passing chunks waits for a GC on a busy machine).
    expect(grownMb, `RSS grew by ${grownMb.toFixed(1)} MB during the second upload`).toBeLessThan(10);
  });
});

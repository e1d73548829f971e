/**
 * The one contract every Storage adapter passes (src/ports/storage.ts). Each adapter's test file
 * calls `storageContract` with a factory that opens the adapter on an empty place (a new temp
 * directory, a new bucket...).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { uploadKey, type Storage } from '../../src/ports/storage.js';

export interface StorageFixture {
  storage: Storage;
  /** What the adapter keeps besides finished objects (temp files, parts); [] when it cannot tell. */
  leftovers(): Promise<string[]>;
  /** Removes everything the fixture created and closes the adapter. */
  cleanup(): Promise<void>;
}

const MB = 1024 * 1024;

/** `total` bytes of a repeatable pattern in 64 KB chunks, made as they are read. */
function* patterned(total: number, seed = 0): Generator<Buffer> {
  const chunkSize = 64 * 1024;
  for (let offset = 0; offset < total; offset += chunkSize) {
    const chunk = Buffer.alloc(Math.min(chunkSize, total - offset));
    for (let i = 0; i < chunk.length; i++) chunk[i] = (offset + i + seed * 7) % 251;
    yield chunk;
  }
}

const sha256Of = (chunks: Iterable<Buffer>) => {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
};

async function sha256OfStream(body: Readable): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

async function readAll(storage: Storage, key: string): Promise<Buffer | null> {
  const object = await storage.get(key);
  if (!object) return null;
  return Buffer.concat((await object.body.toArray()) as Buffer[]);
}

/** A body that yields `before` bytes and then fails. */
function failingAfter(before: number): Readable {
  return Readable.from(
    (function* () {
      yield* patterned(before);
      throw new Error('the client went away');
    })(),
  );
}

export function storageContract(name: string, open: () => Promise<StorageFixture>) {
  describe(`Storage contract: ${name}`, () => {
    const fixtures: StorageFixture[] = [];
    const start = async () => {
      const fixture = await open();
      fixtures.push(fixture);
      return fixture;
    };
    afterEach(async () => {
      for (const fixture of fixtures.splice(0)) await fixture.cleanup();
    });

    it('round-trips bytes and answers their size', async () => {
      const { storage } = await start();
      const bytes = Buffer.from('hello, storage \u2603\n\u0000\u00ff', 'utf8');
      expect(await storage.put('a/b/hello.txt', Readable.from([bytes]))).toEqual({ bytes: bytes.length });
      const object = await storage.get('a/b/hello.txt');
      expect(object?.size).toBe(bytes.length);
      expect(Buffer.concat((await object!.body.toArray()) as Buffer[])).toEqual(bytes);
      expect(await storage.head('a/b/hello.txt')).toEqual({ size: bytes.length });
    });

    it('stores an empty body', async () => {
      const { storage } = await start();
      expect(await storage.put('empty', Readable.from([]))).toEqual({ bytes: 0 });
      expect(await storage.head('empty')).toEqual({ size: 0 });
      expect(await readAll(storage, 'empty')).toEqual(Buffer.alloc(0));
    });

    it('streams a multi-MB body in and out (several S3 parts)', async () => {
      const { storage } = await start();
      const total = 12 * MB + 12_345;
      expect(await storage.put('big', Readable.from(patterned(total)))).toEqual({ bytes: total });
      expect(await storage.head('big')).toEqual({ size: total });
      const object = await storage.get('big');
      expect(object?.size).toBe(total);
      expect(await sha256OfStream(object!.body)).toEqual({ sha256: sha256Of(patterned(total)), bytes: total });
    });

    it('answers null for a missing key', async () => {
      const { storage } = await start();
      expect(await storage.get('uploads/00/nothing')).toBeNull();
      expect(await storage.head('uploads/00/nothing')).toBeNull();
      await storage.put('uploads/00/something', Readable.from([Buffer.from('x')]));
      // A key below an object is missing too (a file is not a directory).
      expect(await storage.head('uploads/00/something/below')).toBeNull();
    });

    it('deletes idempotently', async () => {
      const { storage } = await start();
      await storage.delete('never-there');
      await storage.put('gone', Readable.from([Buffer.from('bye')]));
      await storage.delete('gone');
      expect(await storage.head('gone')).toBeNull();
      expect(await storage.get('gone')).toBeNull();
      await storage.delete('gone');
    });

    it('overwrites: the key answers the newest body whole', async () => {
      const { storage } = await start();
      await storage.put('k', Readable.from(patterned(3 * MB, 1)));
      expect(await storage.put('k', Readable.from([Buffer.from('short')]))).toEqual({ bytes: 5 });
      expect(await readAll(storage, 'k')).toEqual(Buffer.from('short'));
    });

    it('keeps nothing of a body that fails, small or multipart', async () => {
      const fixture = await start();
      const { storage } = fixture;
      await expect(storage.put('failed-small', failingAfter(1000))).rejects.toThrow('the client went away');
      await expect(storage.put('failed-big', failingAfter(7 * MB))).rejects.toThrow('the client went away');
      expect(await storage.head('failed-small')).toBeNull();
      expect(await storage.head('failed-big')).toBeNull();
      expect(await fixture.leftovers()).toEqual([]);
    });

    it('keeps the previous object when an overwrite fails', async () => {
      const { storage } = await start();
      await storage.put('kept', Readable.from([Buffer.from('first')]));
      await expect(storage.put('kept', failingAfter(6 * MB))).rejects.toThrow('the client went away');
      expect(await readAll(storage, 'kept')).toEqual(Buffer.from('first'));
    });

    it('keeps nothing of an aborted put', async () => {
      const fixture = await start();
      const { storage } = fixture;
      const controller = new AbortController();
      // The body aborts the put itself once 1 MB of it has been read: deterministic, no timers.
      const body = Readable.from(
        (function* () {
          let sent = 0;
          for (const chunk of patterned(20 * MB)) {
            if (sent >= MB) controller.abort();
            sent += chunk.length;
            yield chunk;
          }
        })(),
      );
      const putting = storage.put('aborted', body, { signal: controller.signal });
      await expect(putting).rejects.toThrow(/abort/i);
      expect(await storage.head('aborted')).toBeNull();
      expect(await fixture.leftovers()).toEqual([]);
      const already = AbortSignal.abort();
      await expect(storage.put('never', Readable.from([Buffer.from('x')]), { signal: already })).rejects.toThrow(/abort/i);
      expect(await storage.head('never')).toBeNull();
    });

    it('keeps uploads under the content-addressed layout uploads/<2 hex>/<sha256>', async () => {
      const { storage } = await start();
      const bodies = [Buffer.from('one file'), Buffer.from('another file')];
      const keys = bodies.map((body) => uploadKey(createHash('sha256').update(body).digest('hex')));
      for (const [i, key] of keys.entries()) {
        expect(key).toMatch(/^uploads\/([0-9a-f]{2})\/\1[0-9a-f]{62}$/);
        await storage.put(key, Readable.from([bodies[i]!]));
      }
      for (const [i, key] of keys.entries()) expect(await readAll(storage, key)).toEqual(bodies[i]);
      await storage.delete(keys[0]!);
      expect(await storage.head(keys[0]!)).toBeNull();
      expect(await storage.head(keys[1]!)).toEqual({ size: bodies[1]!.length });
    });

    it('refuses keys that could leave its namespace', async () => {
      const { storage } = await start();
      for (const key of ['', '/abs', '../up', 'a/../../up', 'a//b', 'a/', '.hidden', 'a/.tmp-x', 'back\\slash']) {
        await expect(storage.put(key, Readable.from([Buffer.from('x')])), key).rejects.toThrow(/invalid storage key/);
        await expect(storage.get(key), key).rejects.toThrow(/invalid storage key/);
        await expect(storage.delete(key), key).rejects.toThrow(/invalid storage key/);
      }
      expect(() => uploadKey('ABC')).toThrow();
    });
  });
}

/**
 * Storage in a local directory: a key is a file path under it. A put writes a temp file in the
 * target's own directory (same file system) and renames it into place, so readers never see a
 * half-written object; the temp file is removed when the put fails. Several instances need the
 * directory shared.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertStorageKey, type Storage, type StoredObject } from '../../ports/storage.js';

/** Temp files start with this; no key segment starts with a dot, so none can collide with one. */
const TEMP_PREFIX = '.tmp-';

export class LocalStorage implements Storage {
  constructor(private readonly dir: string) {}

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<{ bytes: number }> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const temp = join(dirname(target), `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(temp, { flags: 'wx', flush: true }), { signal: options.signal });
      await rename(temp, target);
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
    return { bytes };
  }

  async get(key: string): Promise<StoredObject | null> {
    // Opened before its size is read, so a delete or overwrite in between cannot split the two.
    let handle;
    try {
      handle = await open(this.path(key), 'r');
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
    const info = await handle.stat().catch(async (e: unknown) => {
      await handle.close();
      throw e;
    });
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return { body: handle.createReadStream(), size: info.size };
  }

  async head(key: string): Promise<{ size: number } | null> {
    const size = await sizeOf(this.path(key));
    return size === null ? null : { size };
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async close(): Promise<void> {}

  private path(key: string): string {
    assertStorageKey(key);
    return join(this.dir, ...key.split('/'));
  }
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : null;
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

/** No file there: nothing at the path, or a file where a directory of the path should be. */
function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The one contract every DataKeys adapter passes (src/ports/data-keys.ts). Each adapter's test file
 * calls `dataKeysContract` with a factory that opens the adapter on a fresh, migrated database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DataKeyDestroyedError, type DataKeys } from '../../src/ports/data-keys.js';

export interface DataKeysFixture {
  keys: DataKeys;
  /** A second adapter on the same database (another instance). */
  other: DataKeys;
  /** Closes the adapters and removes the database. */
  cleanup(): Promise<void>;
}

export function dataKeysContract(name: string, open: () => Promise<DataKeysFixture>, enabled: boolean) {
  describe.skipIf(!enabled)(`DataKeys contract: ${name}`, () => {
    const fixtures: DataKeysFixture[] = [];
    const start = async () => {
      const fixture = await open();
      fixtures.push(fixture);
      return fixture;
    };
    afterEach(async () => {
      for (const fixture of fixtures.splice(0)) await fixture.cleanup();
    });

    it('creates a random 256-bit key per scope, and answers the same key after', async () => {
      const { keys, other } = await start();
      expect(await keys.get('conversation:a')).toBeNull();
      const a = await keys.create('conversation:a');
      const b = await keys.create('conversation:b');
      expect(a).toHaveLength(32);
      expect(b).toHaveLength(32);
      expect(a.equals(b)).toBe(false);
      expect((await keys.create('conversation:a')).equals(a)).toBe(true);
      expect((await keys.get('conversation:a'))?.equals(a)).toBe(true);
      expect((await other.get('conversation:a'))?.equals(a)).toBe(true);
    });

    it('gives every instance creating together the same key', async () => {
      const { keys, other } = await start();
      const made = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? keys : other).create('conversation:race')));
      for (const key of made) expect(key.equals(made[0]!)).toBe(true);
    });

    it('destroys a key for good: get answers null, create refuses, destroying again is fine', async () => {
      const { keys, other } = await start();
      await keys.create('conversation:gone');
      const kept = await keys.create('conversation:kept');
      await keys.destroy('conversation:gone');
      expect(await keys.get('conversation:gone')).toBeNull();
      expect(await other.get('conversation:gone')).toBeNull();
      await expect(keys.create('conversation:gone')).rejects.toBeInstanceOf(DataKeyDestroyedError);
      await keys.destroy('conversation:gone');
      await other.destroy('conversation:never-made');
      expect(await keys.get('conversation:never-made')).toBeNull();
      await expect(keys.create('conversation:never-made')).rejects.toBeInstanceOf(DataKeyDestroyedError);
      expect((await keys.get('conversation:kept'))?.equals(kept)).toBe(true);
    });

    it('destroys every key under a prefix, and only those (no wildcard widens it)', async () => {
      const { keys } = await start();
      await keys.create('user:u1:conversation:1');
      await keys.create('user:u1:conversation:2');
      const u10 = await keys.create('user:u10:conversation:1');
      const wild = await keys.create('user:u1_conversation:x');
      expect(await keys.destroyPrefix('user:u1:')).toBe(2);
      expect(await keys.get('user:u1:conversation:1')).toBeNull();
      expect(await keys.get('user:u1:conversation:2')).toBeNull();
      expect((await keys.get('user:u10:conversation:1'))?.equals(u10)).toBe(true);
      expect((await keys.get('user:u1_conversation:x'))?.equals(wild)).toBe(true);
      expect(await keys.destroyPrefix('user:u1:')).toBe(0);
      await expect(keys.destroyPrefix('')).rejects.toThrow(RangeError);
    });
  });
}

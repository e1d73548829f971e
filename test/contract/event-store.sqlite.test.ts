import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { describe, expect, it } from 'vitest';
import { WrongExpectedVersionError } from '../../src/errors.js';
import { eventStoreContract } from './event-store.contract.js';

eventStoreContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-es-'));
  const file = join(dir, 'events.db');
  let store = new SqliteEventStore({ file, pollIntervalMs: 50 });
  return {
    get store() {
      return store;
    },
    reopen: async () => {
      await store.close();
      store = new SqliteEventStore({ file, pollIntervalMs: 50 });
      return store;
    },
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite event store: several connections in one process', () => {
  it("wakes another connection's subscriber on append at once (no poll: the writer thread announces it)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-es-'));
    const file = join(dir, 'events.db');
    // A poll this slow would time the test out: only the announcement can deliver in time.
    const writer = new SqliteEventStore({ file, pollIntervalMs: 600_000 });
    const reader = new SqliteEventStore({ file, pollIntervalMs: 600_000 });
    const seen: string[] = [];
    const subscription = reader.subscribe({ after: 0, onCommit: async (commit) => void seen.push(...commit.events.map((e) => e.type)) });
    try {
      await writer.append('thing-1', [{ type: 'ThingMade', data: {} }], { expectedVersion: 0, tenantId: 't' });
      await expect.poll(() => seen, { timeout: 2000 }).toEqual(['ThingMade']);
      await writer.append('thing-1', [{ type: 'ThingChanged', data: {} }], { expectedVersion: 1, tenantId: 't' });
      await expect.poll(() => seen, { timeout: 2000 }).toEqual(['ThingMade', 'ThingChanged']);
    } finally {
      await subscription.close();
      await Promise.all([writer.close(), reader.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes an in-memory log inline, with the same version checks', async () => {
    const store = new SqliteEventStore({ file: ':memory:' });
    try {
      expect(await store.append('thing-1', [{ type: 'ThingMade', data: { n: 1 } }], { expectedVersion: 0, tenantId: 't' })).toEqual({ version: 1, position: 1 });
      await expect(store.append('thing-1', [{ type: 'ThingMade', data: {} }], { expectedVersion: 0, tenantId: 't' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect((await store.readStream('thing-1')).map((e) => e.data)).toEqual([{ n: 1 }]);
    } finally {
      await store.close();
    }
  });
});

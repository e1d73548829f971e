import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { commitWriter, configureLogConnection } from '../../src/adapters/event-store/sqlite-commit.js';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WrongExpectedVersionError } from '../../src/errors.js';
import type { Commit, NewEvent } from '../../src/ports/event-store.js';
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

describe('sqlite event store: commits handed over by the writer', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A store on a fresh file (or ':memory:'), closed after the test. No poll within a test's time: only hand-overs and announcements deliver. */
  function open(file = join(tempDir(), 'events.db')) {
    const store = new SqliteEventStore({ file, pollIntervalMs: 600_000 });
    cleanups.push(() => store.close());
    return { store, file };
  }
  function tempDir() {
    const dir = mkdtempSync(join(tmpdir(), 'sy-es-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }
  /** The commits handed to a new subscriber from the start of the log; its handler first waits for `gate`. */
  function follow(store: SqliteEventStore, gate: () => Promise<void> = async () => undefined) {
    const seen: Commit[] = [];
    const subscription = store.subscribe({
      after: 0,
      onCommit: async (commit) => {
        await gate();
        seen.push(commit);
      },
    });
    cleanups.push(() => subscription.close());
    return seen;
  }
  /** Counts its subscribers' reads of the file from now on (each one's first read, on subscribing, is done). */
  const fileReads = (store: SqliteEventStore) => vi.spyOn(store as unknown as { readAllSync: (after: number, limit: number) => Commit[] }, 'readAllSync');
  const positions = (commits: Commit[]) => commits.map((c) => c.position);
  /** Commits exactly as reading the log back returns them: same values, same key order. */
  async function expectAsReadBack(store: SqliteEventStore, seen: Commit[], count: number) {
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(count);
    const readBack = await store.readAll({ after: 0, limit: count + 1 });
    expect(seen).toStrictEqual(readBack);
    expect(JSON.stringify(seen)).toBe(JSON.stringify(readBack));
  }
  const many = (n: number, type = 'UsageRecorded'): NewEvent[] => Array.from({ length: n }, (_, i) => ({ type, data: { i, model: 'gpt-x', tokens: [i, i * 2] } }));

  it('hands every connection in the process the commits the writer thread wrote, exactly as reading back returns them, without reading the file', async () => {
    const { store: writer, file } = open();
    const { store: other } = open(file);
    const [seenHere, seenThere] = [follow(writer), follow(other)];
    const [readsHere, readsThere] = [fileReads(writer), fileReads(other)];
    await writer.append('order-1', [{ type: 'OrderPlaced', data: { total: 42.5, items: ['a', 'b'], nested: { ok: true, none: null } } }, { type: 'OrderPaid', data: { note: 'héllo ✓ 😀' } }], {
      expectedVersion: 0,
      tenantId: 'tenant-a',
      causationId: 'req-1',
      correlationId: randomUUID(),
    });
    await writer.append('order-2', [{ type: 'OrderPlaced', data: {}, schema_version: 3, id: randomUUID() }], { expectedVersion: 0, tenantId: 'tenant-b' });
    await writer.append('usage-x', many(50), { expectedVersion: 'any', tenantId: 'tenant-a' });
    await expectAsReadBack(writer, seenHere, 3);
    await expectAsReadBack(other, seenThere, 3);
    expect(readsHere).not.toHaveBeenCalled();
    expect(readsThere).not.toHaveBeenCalled();
  });

  it('shares one parsed commit among the subscribers of a connection', async () => {
    const { store } = open();
    const [first, second] = [follow(store), follow(store)];
    await store.append('thing-1', [{ type: 'ThingMade', data: { n: 1 } }], { expectedVersion: 0, tenantId: 't' });
    await expect.poll(() => [first.length, second.length]).toEqual([1, 1]);
    expect(first[0]).toBe(second[0]);
  });

  it('reads back a commit whose text SQLite stores altered (a lone surrogate half), so subscribers still get what the file holds', async () => {
    const { store } = open();
    const seen = follow(store);
    const reads = fileReads(store);
    await store.append('thing-1', [{ type: 'Odd\ud800Type', data: { text: 'lone \udc00 half' } }], { expectedVersion: 0, tenantId: 't\udfff' });
    await store.append('thing-1', [{ type: 'ThingChanged', data: {} }], { expectedVersion: 1, tenantId: 't' });
    await expectAsReadBack(store, seen, 2);
    expect(seen[0]!.events[0]!.type).not.toBe('Odd\ud800Type');
    expect(seen[0]!.events[0]!.data).toEqual({ text: 'lone \udc00 half' }); // JSON escapes it: data is exact either way
    expect(reads).toHaveBeenCalledWith(0, 500); // the odd commit was read from the file
  });

  it('delivers a commit another process wrote between two handed-over ones, in order and without a gap', async () => {
    const { store, file } = open();
    const seen = follow(store);
    // Another process's connection: it writes the file, but nothing in this process hears of it.
    const db = new Database(file);
    cleanups.push(() => void db.close());
    configureLogConnection(db);
    const writeElsewhere = commitWriter(db);
    const otherEvent = { id: randomUUID(), type: 'ThingChanged', schemaVersion: 1, data: JSON.stringify({ by: 'cli' }) };
    await store.append('thing-1', [{ type: 'ThingMade', data: {} }], { expectedVersion: 0, tenantId: 't' });
    await expect.poll(() => seen.length).toBe(1);
    const elsewhere = writeElsewhere({ stream: 'thing-1', commitId: otherEvent.id, expectedVersion: 1, tenantId: 't', occurredAt: new Date().toISOString(), causationId: null, correlationId: null, events: [otherEvent] });
    expect(elsewhere.result.position).toBe(2);
    await store.append('thing-1', [{ type: 'ThingChanged', data: { by: 'relay' } }], { expectedVersion: 2, tenantId: 't' });
    await store.append('thing-1', [{ type: 'ThingChanged', data: { by: 'relay again' } }], { expectedVersion: 3, tenantId: 't' });
    await expectAsReadBack(store, seen, 4);
    expect(positions(seen)).toEqual([1, 2, 3, 4]);
  });

  it('gives a subscriber that fell further behind than the hand-over holds every commit, in order, from the file', async () => {
    const { store: writer, file } = open();
    const { store } = open(file);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = follow(store, () => released);
    cleanups.push(() => release()); // before the subscription closes, should the test fail
    const fast = follow(store);
    const reads = fileReads(store);
    // 6,000 events: more than a connection keeps, so the first commits are gone when the slow one asks.
    for (let i = 0; i < 7; i++) await writer.append(`usage-${i}`, many(i === 0 ? 1 : 1000), { expectedVersion: 0, tenantId: 't' });
    await expect.poll(() => fast.length, { timeout: 5000 }).toBe(7);
    expect(reads).not.toHaveBeenCalled(); // the fast one kept up on hand-overs
    release();
    await expectAsReadBack(store, slow, 7);
    expect(positions(slow)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(reads).toHaveBeenCalledWith(1, 500); // the slow one read from the file
  });

  it('lets go of a handed-over commit once every subscriber of the connection has taken it, not before', async () => {
    const { store: writer, file } = open();
    const { store } = open(file);
    const held = () => [...(store as unknown as { handedOver: Map<number, unknown> }).handedOver.keys()];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = follow(store, () => released);
    cleanups.push(() => release());
    const fast = follow(store);
    const reads = fileReads(store);
    for (let i = 0; i < 3; i++) await writer.append(`usage-${i}`, many(10), { expectedVersion: 0, tenantId: 't' });
    await expect.poll(() => fast.length).toBe(3);
    expect(held()).toEqual([1, 2, 3]); // the slow subscriber has taken none of them yet
    release();
    await expectAsReadBack(store, slow, 3);
    await expect.poll(held).toEqual([]);
    expect(reads).not.toHaveBeenCalled(); // the slow one took them from the hand-over all the same
  });

  it('hands over the commits of an in-memory log too', async () => {
    const { store } = open(':memory:');
    const seen = follow(store);
    const reads = fileReads(store);
    await store.append('thing-1', [{ type: 'ThingMade', data: { n: 1 } }], { expectedVersion: 0, tenantId: 't', causationId: 'c' });
    await store.append('thing-1', many(3, 'ThingChanged'), { expectedVersion: 1, tenantId: 't' });
    await expectAsReadBack(store, seen, 2);
    expect(reads).not.toHaveBeenCalled();
  });
});

describe('sqlite event store: the read cache subscribers share', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A log of 60 commits of 20 events of about 1 KB, written by another connection (so the
   * reader's subscribers read it from the file, through the cache, as live views catching up do).
   */
  async function writtenLog() {
    const dir = mkdtempSync(join(tmpdir(), 'sy-es-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'events.db');
    const writer = new SqliteEventStore({ file, pollIntervalMs: 600_000 });
    const text = 'x'.repeat(1000);
    for (let i = 0; i < 60; i++) {
      await writer.append(`usage-${i}`, Array.from({ length: 20 }, (_, j) => ({ type: 'UsageRecorded', data: { i, j, text } })), { expectedVersion: 0, tenantId: 't' });
    }
    await writer.close();
    return file;
  }

  it('never holds more than its byte bound, and every subscriber still gets the log exactly', async () => {
    const file = await writtenLog();
    const bound = 1024 * 1024; // a read of the whole log here is about 3 MB; of 15 commits, 0.7 MB
    const store = new SqliteEventStore({ file, pollIntervalMs: 600_000, readCacheBytes: bound });
    cleanups.push(() => store.close());
    const whole = await store.readAll({ after: 0, limit: 1000 });
    let largest = 0;
    // Subscribers starting at different places: reads of different sizes, some shared.
    const starts = [0, 0, 15, 30, 30, 45, 50, 55];
    const seen = starts.map((after) => {
      const commits: Commit[] = [];
      const subscription = store.subscribe({
        after,
        onCommit: async (commit) => {
          largest = Math.max(largest, store.readCacheBytes);
          commits.push(commit);
        },
      });
      cleanups.push(() => subscription.close());
      return commits;
    });
    for (const [i, commits] of seen.entries()) {
      await expect.poll(() => commits.length, { timeout: 5000 }).toBe(60 - starts[i]!);
      expect(commits).toStrictEqual(whole.slice(starts[i]));
    }
    expect(largest).toBeGreaterThan(0); // it did cache (reads of 15 commits or fewer fit)
    expect(largest).toBeLessThanOrEqual(bound);
    expect(store.readCacheBytes).toBeLessThanOrEqual(bound);
  });

  it('keeps nothing with a bound of 0', async () => {
    const file = await writtenLog();
    const store = new SqliteEventStore({ file, pollIntervalMs: 600_000, readCacheBytes: 0 });
    cleanups.push(() => store.close());
    const seen: Commit[] = [];
    const subscription = store.subscribe({ after: 0, onCommit: async (commit) => void seen.push(commit) });
    cleanups.push(() => subscription.close());
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(60);
    expect(seen).toStrictEqual(await store.readAll({ after: 0, limit: 1000 }));
    expect(store.readCacheBytes).toBe(0);
  });
});

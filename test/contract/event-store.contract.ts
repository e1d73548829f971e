/**
 * The one contract every EventStore adapter passes. Each adapter's test file calls
 * `eventStoreContract` with a factory that opens a fresh, empty store (its own SQLite file, its
 * own JetStream stream, its own KurrentDB stream prefix...).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchivalNotSupportedError, WrongExpectedVersionError } from '../../src/errors.js';
import type { Commit, EventStore } from '../../src/ports/event-store.js';

export interface EventStoreFixture {
  store: EventStore;
  /** Closes the store and opens a new instance on the same data (durability). */
  reopen: () => Promise<EventStore>;
  /** Removes everything the fixture created. */
  cleanup: () => Promise<void>;
}

const tenant = 'tenant-a';
const ev = (type: string, data: Record<string, unknown> = {}) => ({ type, data });

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function eventStoreContract(name: string, open: () => Promise<EventStoreFixture>, enabled = true) {
  describe.skipIf(!enabled)(`EventStore contract: ${name}`, () => {
    let fixture: EventStoreFixture | undefined;
    const start = async () => {
      fixture = await open();
      return fixture;
    };
    afterEach(async () => {
      await fixture?.cleanup();
      fixture = undefined;
    });

    it('appends a commit and reads it back with the full envelope', async () => {
      const { store } = await start();
      const correlationId = randomUUID();
      const result = await store.append('order-1', [ev('OrderPlaced', { total: 42, items: ['a', 'b'] }), ev('OrderPaid', { note: 'héllo ✓' })], {
        expectedVersion: 0,
        tenantId: tenant,
        causationId: 'req-1',
        correlationId,
      });
      expect(result.version).toBe(2);
      expect(result.position).toBeGreaterThan(0);

      const events = await store.readStream('order-1');
      expect(events).toHaveLength(2);
      const [first, second] = events;
      expect(first).toMatchObject({
        type: 'OrderPlaced',
        stream: 'order-1',
        version: 1,
        position: result.position,
        tenant_id: tenant,
        schema_version: 1,
        causation_id: 'req-1',
        correlation_id: correlationId,
        data: { total: 42, items: ['a', 'b'] },
      });
      expect(second).toMatchObject({ type: 'OrderPaid', version: 2, position: result.position, data: { note: 'héllo ✓' } });
      expect(first!.id).not.toBe(second!.id);
      expect(new Date(first!.occurred_at).toISOString()).toBe(first!.occurred_at);
    });

    it('keeps caller-given event ids and schema versions', async () => {
      const { store } = await start();
      const id = randomUUID();
      await store.append('thing-1', [{ id, type: 'ThingMade', data: { a: 1 }, schema_version: 3 }], { expectedVersion: 0, tenantId: tenant });
      const [stored] = await store.readStream('thing-1');
      expect(stored).toMatchObject({ id, schema_version: 3, causation_id: null, correlation_id: null });
    });

    it('returns an empty list for a stream that does not exist', async () => {
      const { store } = await start();
      expect(await store.readStream('nothing-here')).toEqual([]);
    });

    it('reads a stream from a version', async () => {
      const { store } = await start();
      await store.append('counter-1', [ev('A'), ev('B')], { expectedVersion: 0, tenantId: tenant });
      await store.append('counter-1', [ev('C')], { expectedVersion: 2, tenantId: tenant });
      const tail = await store.readStream('counter-1', 1);
      expect(tail.map((e) => [e.type, e.version])).toEqual([
        ['B', 2],
        ['C', 3],
      ]);
    });

    it('rejects an append at the wrong expected version with a typed error', async () => {
      const { store } = await start();
      await store.append('acct-1', [ev('Opened')], { expectedVersion: 0, tenantId: tenant });
      const stale = store.append('acct-1', [ev('Renamed')], { expectedVersion: 0, tenantId: tenant });
      await expect(stale).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(store.append('acct-1', [ev('Renamed')], { expectedVersion: 5, tenantId: tenant })).rejects.toMatchObject({
        stream: 'acct-1',
        actual: 1,
      });
      expect(await store.readStream('acct-1')).toHaveLength(1);
    });

    it("appends without a check when expectedVersion is 'any'", async () => {
      const { store } = await start();
      await store.append('log-1', [ev('A')], { expectedVersion: 'any', tenantId: tenant });
      const r = await store.append('log-1', [ev('B')], { expectedVersion: 'any', tenantId: tenant });
      expect(r.version).toBe(2);
    });

    it('lets exactly one of several concurrent appends at the same version win', async () => {
      const { store } = await start();
      await store.append('race-1', [ev('Start')], { expectedVersion: 0, tenantId: tenant });
      const attempts = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => store.append('race-1', [ev('Step', { i })], { expectedVersion: 1, tenantId: tenant })),
      );
      expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
      for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toBeInstanceOf(WrongExpectedVersionError);
      expect(await store.readStream('race-1')).toHaveLength(2);
    });

    it('de-duplicates a retried commit with the same commit id', async () => {
      const { store } = await start();
      const commitId = randomUUID();
      const first = await store.append('dedup-1', [ev('Once')], { expectedVersion: 0, tenantId: tenant, commitId });
      const again = await store.append('dedup-1', [ev('Once')], { expectedVersion: 0, tenantId: tenant, commitId });
      expect(again).toEqual(first);
      expect(await store.readStream('dedup-1')).toHaveLength(1);
    });

    it('orders commits of all streams in the global log', async () => {
      const { store } = await start();
      expect(await store.headPosition()).toBe(0);
      const a = await store.append('s-a', [ev('A1'), ev('A2')], { expectedVersion: 0, tenantId: tenant });
      const b = await store.append('s-b', [ev('B1')], { expectedVersion: 0, tenantId: 'tenant-b' });
      const c = await store.append('s-a', [ev('A3')], { expectedVersion: 2, tenantId: tenant });
      expect(b.position).toBeGreaterThan(a.position);
      expect(c.position).toBeGreaterThan(b.position);
      expect(await store.headPosition()).toBe(c.position);

      const all = await store.readAll({ after: 0 });
      expect(all.map((x) => [x.stream, x.position, x.events.map((e) => e.type)])).toEqual([
        ['s-a', a.position, ['A1', 'A2']],
        ['s-b', b.position, ['B1']],
        ['s-a', c.position, ['A3']],
      ]);
      expect(all[1]!.events[0]!.tenant_id).toBe('tenant-b');
      const afterA = await store.readAll({ after: a.position });
      expect(afterA.map((x) => x.position)).toEqual([b.position, c.position]);
      const limited = await store.readAll({ after: 0, limit: 2 });
      expect(limited.map((x) => x.position)).toEqual([a.position, b.position]);
      expect(await store.readAll({ after: c.position })).toEqual([]);
    });

    it('stores a large commit atomically', async () => {
      const { store } = await start();
      const many = Array.from({ length: 100 }, (_, i) => ev('Item', { i, text: 'x'.repeat(200) }));
      const r = await store.append('bulk-1', many, { expectedVersion: 0, tenantId: tenant });
      expect(r.version).toBe(100);
      const commits = await store.readAll({ after: 0 });
      expect(commits).toHaveLength(1);
      expect(commits[0]!.events.map((e) => e.data.i)).toEqual(many.map((_, i) => i));
    });

    it('catches a subscriber up from a position, then tails live commits in order', async () => {
      const { store } = await start();
      const first = await store.append('sub-1', [ev('E1')], { expectedVersion: 0, tenantId: tenant });
      await store.append('sub-1', [ev('E2')], { expectedVersion: 1, tenantId: tenant });
      const seen: Commit[] = [];
      const sub = store.subscribe({
        after: first.position,
        onCommit: async (commit) => {
          seen.push(commit);
        },
      });
      try {
        await waitFor(() => seen.length === 1);
        for (let i = 3; i <= 6; i++) await store.append('sub-2', [ev(`E${i}`)], { expectedVersion: 'any', tenantId: tenant });
        await waitFor(() => seen.length === 5);
        expect(seen.map((c) => c.events[0]!.type)).toEqual(['E2', 'E3', 'E4', 'E5', 'E6']);
        const positions = seen.map((c) => c.position);
        expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      } finally {
        await sub.close();
      }
    });

    it('delivers the commits of streams a subscriber skips in order, without their events; others get every event', async () => {
      const { store } = await start();
      // One commit before the subscriptions start (caught up) and the rest while they tail.
      await store.append('skipped-1', [ev('S1'), ev('S2')], { expectedVersion: 0, tenantId: tenant });
      const skipping: Commit[] = [];
      const everything: Commit[] = [];
      const subs = [
        store.subscribe({ after: 0, skipEventsOf: (stream) => stream === 'skipped-1', onCommit: async (commit) => void skipping.push(commit) }),
        store.subscribe({ after: 0, onCommit: async (commit) => void everything.push(commit) }),
      ];
      try {
        await waitFor(() => skipping.length === 1 && everything.length === 1);
        await store.append('kept-1', [ev('K1')], { expectedVersion: 0, tenantId: tenant });
        await store.append('skipped-1', [ev('S3')], { expectedVersion: 2, tenantId: tenant });
        await store.append('kept-1', [ev('K2')], { expectedVersion: 1, tenantId: tenant });
        await waitFor(() => skipping.length === 4 && everything.length === 4);
        const heads = await store.readAll({ after: 0 });
        expect(skipping.map((c) => [c.position, c.stream, c.events.map((e) => e.type)])).toEqual([
          [heads[0]!.position, 'skipped-1', []],
          [heads[1]!.position, 'kept-1', ['K1']],
          [heads[2]!.position, 'skipped-1', []],
          [heads[3]!.position, 'kept-1', ['K2']],
        ]);
        expect(everything.map((c) => c.events.map((e) => e.type))).toEqual([['S1', 'S2'], ['K1'], ['S3'], ['K2']]);
      } finally {
        await Promise.all(subs.map((sub) => sub.close()));
      }
    });

    it('waits for the handler before delivering the next commit, and stops after close', async () => {
      const { store } = await start();
      let inFlight = 0;
      let maxInFlight = 0;
      const seen: string[] = [];
      const sub = store.subscribe({
        after: 0,
        onCommit: async (commit) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((r) => setTimeout(r, 5));
          seen.push(commit.events[0]!.type);
          inFlight--;
        },
      });
      for (let i = 0; i < 5; i++) await store.append('seq-1', [ev(`T${i}`)], { expectedVersion: i, tenantId: tenant });
      await waitFor(() => seen.length === 5);
      expect(maxInFlight).toBe(1);
      await sub.close();
      await store.append('seq-1', [ev('Late')], { expectedVersion: 5, tenantId: tenant });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen).toHaveLength(5);
    });

    it('reports a failing handler through onError and stops', async () => {
      const { store } = await start();
      await store.append('boom-1', [ev('A')], { expectedVersion: 0, tenantId: tenant });
      await store.append('boom-1', [ev('B')], { expectedVersion: 1, tenantId: tenant });
      const errors: unknown[] = [];
      let calls = 0;
      const sub = store.subscribe({
        after: 0,
        onCommit: async () => {
          calls++;
          throw new Error('handler failed');
        },
        onError: (e) => errors.push(e),
      });
      await waitFor(() => errors.length === 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(calls).toBe(1);
      await sub.close();
    });

    it('keeps every acknowledged event across a reopen', async () => {
      const f = await start();
      for (let i = 0; i < 20; i++) await f.store.append(`dur-${i % 3}`, [ev('D', { i })], { expectedVersion: 'any', tenantId: tenant });
      const reopened = await f.reopen();
      const all = await reopened.readAll({ after: 0 });
      expect(all.flatMap((c) => c.events.map((e) => e.data.i))).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect((await reopened.readStream('dur-0')).map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      await reopened.ping();
    });

    it('archival: removes a stream\'s commits below a position, never its last one (or says it cannot)', async () => {
      const { store } = await start();
      const positions: number[] = [];
      for (let i = 0; i < 4; i++) positions.push((await store.append('usage-x', [ev('UsageRecorded', { i })], { expectedVersion: i, tenantId: tenant })).position);
      const other = (await store.append('order-9', [ev('OrderPlaced')], { expectedVersion: 0, tenantId: tenant })).position;
      if (name === 'kurrentdb') {
        await expect(store.removeCommitsBefore!(new Map([['usage-x', positions[2]!]]))).rejects.toThrow(ArchivalNotSupportedError);
        return;
      }
      expect(await store.removeCommitsBefore!(new Map([['usage-x', positions[2]!]]))).toBe(2);
      expect((await store.readAll({ after: 0 })).map((c) => c.position)).toEqual([positions[2], positions[3], other]);
      // Asked to go past the end, the last commit stays, and the stream's version with it.
      expect(await store.removeCommitsBefore!(new Map([['usage-x', other + 1]]))).toBe(1);
      expect((await store.readStream('usage-x')).map((e) => e.version)).toEqual([4]);
      expect((await store.append('usage-x', [ev('UsageRecorded')], { expectedVersion: 4, tenantId: tenant })).version).toBe(5);
    });
  });
}

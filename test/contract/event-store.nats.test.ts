/**
 * The EventStore contract against a real NATS JetStream server, plus what only JetStream does:
 * shared durable consumers and the subject-token encoding of stream names.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { decodeStreamToken, encodeStreamToken, NatsEventStore, type NatsEventStoreOptions } from '../../src/adapters/event-store/nats.js';
import type { Commit } from '../../src/ports/event-store.js';
import { uniqueSuffix } from '../support/services.js';
import { eventStoreContract, type EventStoreFixture } from './event-store.contract.js';

const enabled = inject('services').nats;
const servers = inject('serviceUrls').nats;

/** Each fixture gets its own JetStream stream and its own subject space. */
function isolatedOptions(): NatsEventStoreOptions {
  const suffix = uniqueSuffix();
  return { servers, streamName: `SY_TEST_${suffix}`, subjectPrefix: `sytest.${suffix}` };
}

async function openFixture(): Promise<EventStoreFixture> {
  const options = isolatedOptions();
  let current = await NatsEventStore.connect(options);
  return {
    store: current,
    reopen: async () => {
      await current.close();
      current = await NatsEventStore.connect(options);
      return current;
    },
    cleanup: async () => {
      await current.deleteStream();
      await current.close();
    },
  };
}

eventStoreContract('nats', openFixture, enabled);

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('stream name -> subject token encoding', () => {
  const odd = ['key-tenant:a@b_c-d', 'order-1', 'a_b-c__d', 'x-_3A', 'x-__', 'maintenance-global', 'k-A:B@C:D', 'z9_-:::@@@'];

  it('round-trips odd stream names', () => {
    for (const name of odd) expect(decodeStreamToken(encodeStreamToken(name))).toBe(name);
  });

  it('produces valid, distinct subject tokens', () => {
    const tokens = odd.map(encodeStreamToken);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set(tokens).size).toBe(odd.length);
    expect(encodeStreamToken('key-tenant:a@b_c-d')).toBe('key-tenant_3Aa_40b__c-d');
  });

  it('rejects tokens it could not have produced', () => {
    expect(() => decodeStreamToken('a_3a')).toThrow();
    expect(() => decodeStreamToken('a_')).toThrow();
  });
});

describe.skipIf(!enabled)('NatsEventStore (JetStream specifics)', () => {
  const opened: NatsEventStore[] = [];
  const open = async (options: NatsEventStoreOptions) => {
    const store = await NatsEventStore.connect(options);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    const [first] = opened;
    await first?.deleteStream();
    for (const store of opened.splice(0)) await store.close();
  });

  it('stores and reads back streams whose names need escaping', async () => {
    const store = await open(isolatedOptions());
    const name = 'key-tenant:a@b_c-d';
    const r = await store.append(name, [{ type: 'KeyIssued', data: {} }], { expectedVersion: 0, tenantId: 't' });
    expect(store.subjectFor(name)).toBe(`${store.subjectPrefix}.key-tenant_3Aa_40b__c-d`);
    expect((await store.readStream(name)).map((e) => [e.stream, e.version])).toEqual([[name, 1]]);
    const [commit] = await store.readAll({ after: 0 });
    expect(commit).toMatchObject({ stream: name, position: r.position });
    // A neighbour whose escaped form could be confused with it stays separate.
    expect(await store.readStream('key-tenant_3Aa_40b__c-d')).toEqual([]);
  });

  it('treats the same commit id on two streams as two commits', async () => {
    const store = await open(isolatedOptions());
    const commitId = 'req-42';
    const a = await store.append('a-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't', commitId });
    const b = await store.append('b-1', [{ type: 'B', data: {} }], { expectedVersion: 0, tenantId: 't', commitId });
    expect(b.position).toBeGreaterThan(a.position);
    expect(await store.readStream('b-1')).toHaveLength(1);
  });

  it('de-duplicates a retried commit that is no longer the last one of its stream', async () => {
    const store = await open(isolatedOptions());
    const first = await store.append('d-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't', commitId: 'c-1' });
    await store.append('d-1', [{ type: 'B', data: {} }], { expectedVersion: 1, tenantId: 't' });
    const again = await store.append('d-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't', commitId: 'c-1' });
    expect(again).toEqual(first);
    expect(await store.readStream('d-1')).toHaveLength(2);
  });

  it('recovers from a stale version cache shared with another process', async () => {
    const options = isolatedOptions();
    const mine = await open(options);
    const other = await open(options);
    await mine.append('c-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't' });
    await other.append('c-1', [{ type: 'B', data: {} }], { expectedVersion: 1, tenantId: 't' });
    // `mine` still caches version 1: 'any' must retry, a numeric expectation must fail typed.
    expect((await mine.append('c-1', [{ type: 'C', data: {} }], { expectedVersion: 'any', tenantId: 't' })).version).toBe(3);
    await expect(other.append('c-1', [{ type: 'D', data: {} }], { expectedVersion: 2, tenantId: 't' })).rejects.toMatchObject({ actual: 3 });
    expect((await other.append('c-1', [{ type: 'D', data: {} }], { expectedVersion: 3, tenantId: 't' })).version).toBe(4);
    expect((await mine.readStream('c-1')).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('hands each commit to exactly one of two subscribers sharing a durable name, in order', async () => {
    const options = isolatedOptions();
    const producer = await open(options);
    const [storeA, storeB] = [await open(options), await open(options)];
    const delivered: { by: string; commit: Commit }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const handler = (by: string) => async (commit: Commit) => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, Math.random() * 5));
      delivered.push({ by, commit });
      inFlight--;
    };
    const subA = storeA.subscribe({ after: 0, durableName: 'projector.keys', onCommit: handler('A') });
    const subB = storeB.subscribe({ after: 0, durableName: 'projector.keys', onCommit: handler('B') });
    await Promise.all([subA.ready, subB.ready]);
    try {
      const positions: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await producer.append(`p-${i % 4}`, [{ type: 'E', data: { i } }], { expectedVersion: 'any', tenantId: 't' });
        positions.push(r.position);
      }
      await waitFor(() => delivered.length >= 30);
      await new Promise((r) => setTimeout(r, 200)); // nothing more may arrive
      expect(delivered.map((d) => d.commit.position)).toEqual(positions);
      expect(delivered.map((d) => d.commit.events[0]!.data.i)).toEqual(positions.map((_, i) => i));
      expect(maxInFlight).toBe(1); // the two instances never handle commits concurrently
    } finally {
      await Promise.all([subA.close(), subB.close()]);
    }
  });

  it('resumes a durable subscription where the previous instance acknowledged', async () => {
    const options = isolatedOptions();
    const store = await open(options);
    for (let i = 1; i <= 3; i++) await store.append('r-1', [{ type: `E${i}`, data: {} }], { expectedVersion: i - 1, tenantId: 't' });
    const seen: string[] = [];
    const first = store.subscribe({ after: 0, durableName: 'resume', onCommit: async (c) => void seen.push(c.events[0]!.type) });
    await waitFor(() => seen.length === 3);
    await first.close();
    await store.append('r-1', [{ type: 'E4', data: {} }], { expectedVersion: 3, tenantId: 't' });
    const positions = (await store.readAll({ after: 0 })).map((c) => c.position);
    // The checkpoint says 3 commits are done: the durable consumer continues with the 4th only.
    const second = store.subscribe({ after: positions[2]!, durableName: 'resume', onCommit: async (c) => void seen.push(c.events[0]!.type) });
    try {
      await waitFor(() => seen.length === 4);
      expect(seen).toEqual(['E1', 'E2', 'E3', 'E4']);
    } finally {
      await second.close();
    }
    // A rebuilt projection (checkpoint 0) gets everything again: the consumer is re-created.
    const rebuilt: string[] = [];
    const third = store.subscribe({ after: 0, durableName: 'resume', onCommit: async (c) => void rebuilt.push(c.events[0]!.type) });
    try {
      await waitFor(() => rebuilt.length === 4);
      expect(rebuilt).toEqual(['E1', 'E2', 'E3', 'E4']);
    } finally {
      await third.close();
    }
  });

  it('stops a durable subscription on a handler error without acknowledging the commit', async () => {
    const options = isolatedOptions();
    const store = await open(options);
    await store.append('f-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't' });
    const errors: unknown[] = [];
    let calls = 0;
    const failing = store.subscribe({
      after: 0,
      durableName: 'failing',
      onCommit: async () => {
        calls++;
        throw new Error('boom');
      },
      onError: (e) => errors.push(e),
    });
    await waitFor(() => errors.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1);
    await failing.close();
    // The commit was handed back: the next instance gets it.
    const seen: number[] = [];
    const next = store.subscribe({ after: 0, durableName: 'failing', onCommit: async (c) => void seen.push(c.position) });
    try {
      await waitFor(() => seen.length === 1);
    } finally {
      await next.close();
    }
  });

  it('closes a subscription closed while its consumer is still being opened (durable and ordered)', async () => {
    const store = await open(isolatedOptions());
    await store.append('c-1', [{ type: 'A', data: {} }], { expectedVersion: 0, tenantId: 't' });
    for (const durableName of ['closed-early', undefined]) {
      const subscription = store.subscribe({ after: 1, durableName, onCommit: async () => undefined });
      const closed = subscription.close().then(() => 'closed');
      const late = new Promise((resolve) => setTimeout(resolve, 5000, 'still open after 5 s'));
      expect(await Promise.race([closed, late])).toBe('closed');
    }
  });
});

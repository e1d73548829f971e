/**
 * The EventStore contract against KurrentDB. No server runs on the project's machines: the suite
 * is skipped unless EVENTSTORE_URL points at one (e.g. "kurrentdb://localhost:2113?tls=false").
 */
import { describe, expect, inject, it } from 'vitest';
import { deterministicEventId, KurrentDbEventStore } from '../../src/adapters/event-store/kurrentdb.js';
import { uniqueSuffix } from '../support/services.js';
import { eventStoreContract, type EventStoreFixture } from './event-store.contract.js';

const enabled = inject('services').kurrentdb;
const connectionString = inject('serviceUrls').kurrentdb;

/** Each fixture writes under its own stream prefix; KurrentDB streams are left in place (a test
 * database is disposable, and deleted streams would stay in $all until a scavenge anyway). */
async function openFixture(): Promise<EventStoreFixture> {
  const options = { connectionString, streamPrefix: `t${uniqueSuffix()}_` };
  let current = KurrentDbEventStore.connect(options);
  return {
    store: current,
    reopen: async () => {
      await current.close();
      current = KurrentDbEventStore.connect(options);
      return current;
    },
    cleanup: async () => {
      await current.close();
    },
  };
}

eventStoreContract('kurrentdb', openFixture, enabled);

describe('KurrentDB deterministic event ids', () => {
  it('gives a retried commit the same ids, and different commits, streams and indexes different ones', () => {
    const id = deterministicEventId('order-1', 'commit-1', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deterministicEventId('order-1', 'commit-1', 0)).toBe(id);
    const others = [deterministicEventId('order-1', 'commit-1', 1), deterministicEventId('order-1', 'commit-2', 0), deterministicEventId('order-2', 'commit-1', 0)];
    expect(new Set([id, ...others]).size).toBe(4);
  });
});

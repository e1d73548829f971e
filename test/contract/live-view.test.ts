/**
 * A live view over the embedded log: it folds every later commit, and a large commit is folded in
 * slices with the event loop served in between (a commit of hundreds of usage events must not hold
 * the serving thread for its whole length).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { openSqlDatabase, type SqlDatabase } from '../../src/adapters/sql/database.js';
import { migrateToLatest } from '../../src/adapters/sql/migrate.js';
import { createLogger } from '../../src/logger.js';
import { EVENTS_PER_SLICE, LiveView, type LiveViewDefinition } from '../../src/projections/runtime/live-view.js';
import type { Projection } from '../../src/projections/runtime/projection.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const counted: Projection = { name: 'live_view_test', version: 1, eventTypes: ['Counted'], apply: async () => undefined, reset: async () => undefined };

interface Tally {
  values: number[];
}

async function setup(evolve: (state: Tally, value: number) => void) {
  const store = new SqliteEventStore({ file: ':memory:' });
  const sql: SqlDatabase = await openSqlDatabase({ kind: 'sqlite', file: ':memory:' });
  await migrateToLatest(sql.db);
  const definition: LiveViewDefinition<Tally> = {
    projection: counted,
    load: async () => ({ values: [] }),
    evolve(state, event) {
      evolve(state, (event.data as { value: number }).value);
      return state;
    },
  };
  const view = new LiveView(store, sql, definition, createLogger('silent'));
  await view.start();
  cleanups.push(async () => {
    await view.stop();
    await store.close();
    await sql.close();
  });
  return { store, view };
}

const events = (from: number, count: number, type = 'Counted') => Array.from({ length: count }, (_, i) => ({ type, data: { value: from + i } }));

describe('live view', () => {
  it('folds every relevant event of later commits, in log order, and skips other types', async () => {
    const { store, view } = await setup((state, value) => state.values.push(value));
    await store.append('a', events(0, 3), { expectedVersion: 0, tenantId: 't' });
    await store.append('b', events(100, 2, 'Ignored'), { expectedVersion: 0, tenantId: 't' });
    const last = await store.append('a', events(3, 2), { expectedVersion: 3, tenantId: 't' });
    await view.waitFor(last.position);
    expect(view.state.values).toEqual([0, 1, 2, 3, 4]);
  });

  it('leaves out an event its evolve throws on, and folds the ones after it (it does not follow the log again from before it)', async () => {
    const { store, view } = await setup((state, value) => {
      if (value === 1) throw new Error('cannot fold 1');
      state.values.push(value);
    });
    await store.append('a', events(0, 3), { expectedVersion: 0, tenantId: 't' });
    const last = await store.append('a', events(3, 1), { expectedVersion: 3, tenantId: 't' });
    await view.waitFor(last.position);
    expect(view.state.values).toEqual([0, 2, 3]);
  });

  it('serves the event loop between slices of a large commit, and has all of it once waitFor resolves', async () => {
    const total = EVENTS_PER_SLICE * 4 + 7;
    let seenByOtherWork: number | null = null;
    let otherWorkScheduled = false;
    const { store, view } = await setup((state, value) => {
      state.values.push(value);
      // Other work (a request) arrives while the commit is being folded.
      if (!otherWorkScheduled) {
        otherWorkScheduled = true;
        setImmediate(() => (seenByOtherWork = state.values.length));
      }
    });
    const result = await store.append('big', events(0, total), { expectedVersion: 0, tenantId: 't' });
    await view.waitFor(result.position);
    expect(view.state.values).toEqual(Array.from({ length: total }, (_, i) => i));
    // It ran after the first slice, long before the end of the commit.
    expect(seenByOtherWork).toBe(EVENTS_PER_SLICE);
  });
});

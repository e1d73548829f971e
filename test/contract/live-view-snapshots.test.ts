/**
 * Live view snapshots (src/projections/runtime/live-view.ts), embedded (SQLite log and read
 * models) and distributed (JetStream and MariaDB): a view that stops saves its state with its
 * position; the next start takes it and folds only the log after it, and ends in the state a full
 * replay gives. A snapshot whose checksum fails, or of another version, is ignored: the view
 * starts from its projection's tables and replays from there.
 */
import { sql as rawSql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { NatsEventStore } from '../../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import { createLogger } from '../../src/logger.js';
import type { EventStore } from '../../src/ports/event-store.js';
import { LiveView, type LiveViewDefinition } from '../../src/projections/runtime/live-view.js';
import type { Projection } from '../../src/projections/runtime/projection.js';
import { freshDatabase, type Dialect } from '../support/databases.js';
import { uniqueSuffix } from '../support/services.js';

const services = inject('services');
const urls = inject('serviceUrls');
const logger = createLogger('silent');

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const counted: Projection = { name: 'snapshot_test', version: 1, eventTypes: ['Counted'], apply: async () => undefined, reset: async () => undefined };

interface Tally {
  values: number[];
  byParity: Map<string, number>;
}

const definition = (snapshotVersion = 1): LiveViewDefinition<Tally> => ({
  projection: counted,
  snapshot: { version: snapshotVersion },
  load: async () => ({ values: [], byParity: new Map() }),
  evolve(state, event) {
    const value = (event.data as { value: number }).value;
    state.values.push(value);
    const parity = value % 2 === 0 ? 'even' : 'odd';
    state.byParity.set(parity, (state.byParity.get(parity) ?? 0) + 1);
    return state;
  },
});

const events = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ type: 'Counted', data: { value: from + i } }));

const modes: Array<[string, boolean, Dialect, () => Promise<EventStore>]> = [
  ['embedded', true, 'sqlite', async () => new SqliteEventStore({ file: ':memory:' })],
  [
    'distributed',
    services.nats && services.mysql,
    'mysql',
    async () => {
      const suffix = uniqueSuffix();
      return NatsEventStore.connect({ servers: urls.nats, streamName: `SY_SNAP_${suffix}`, subjectPrefix: `sysnap.${suffix}` });
    },
  ],
];

describe.each(modes)('live view snapshots, %s', (_mode, available, dialect, openStore) => {
  it.skipIf(!available)('a restart folds only the tail after the snapshot; a damaged or other-version snapshot is ignored', async () => {
    const store = await openStore();
    const { sql, cleanup } = await freshDatabase(dialect, urls);
    cleanups.push(async () => {
      if (store instanceof NatsEventStore) await store.deleteStream();
      await store.close();
      await cleanup();
    });
    const view = (version = 1, snapshotEvery = 5) => new LiveView(store, sql as SqlDatabase, definition(version), logger, { snapshotEvery });

    const first = view();
    await first.start();
    expect(first.startedFrom).toEqual({ source: 'tables', position: 0 });
    let version = 0;
    let head = 0;
    for (let i = 0; i < 4; i++) {
      const result = await store.append('count-a', events(i * 3, 3), { expectedVersion: version, tenantId: 't' });
      version = result.version;
      head = result.position;
    }
    await first.waitFor(head);
    await first.stop();
    const saved = await sql.db.selectFrom('live_view_snapshots').selectAll().where('name', '=', 'snapshot_test').executeTakeFirstOrThrow();
    expect(Number(saved.position)).toBe(head);

    // Traffic while it is down.
    const tail = await store.append('count-a', events(12, 3), { expectedVersion: version, tenantId: 't' });

    const restarted = view();
    await restarted.start();
    await restarted.waitFor(tail.position);
    expect(restarted.startedFrom).toEqual({ source: 'snapshot', position: head });
    expect(restarted.eventsFolded).toBe(3); // the tail only

    const fullReplay = new LiveView(store, sql as SqlDatabase, { ...definition(), snapshot: undefined }, logger);
    await fullReplay.start();
    await fullReplay.waitFor(tail.position);
    expect(fullReplay.eventsFolded).toBe(15);
    expect(restarted.state).toEqual(fullReplay.state);
    await fullReplay.stop();
    await restarted.stop();

    // Damaged: the checksum fails, the view starts from the tables and replays everything.
    await rawSql`UPDATE live_view_snapshots SET state = ${'AAAA' + saved.state.slice(4)}`.execute(sql.db);
    const afterDamage = view();
    await afterDamage.start();
    await afterDamage.waitFor(tail.position);
    expect(afterDamage.startedFrom).toEqual({ source: 'tables', position: 0 });
    expect(afterDamage.eventsFolded).toBe(15);
    expect(afterDamage.state).toEqual(fullReplay.state);
    await afterDamage.stop(); // writes a good one again

    // Another snapshot version (the state's shape changed): ignored too.
    const otherVersion = view(2);
    await otherVersion.start();
    expect(otherVersion.startedFrom).toEqual({ source: 'tables', position: 0 });
    await otherVersion.waitFor(tail.position);
    expect(otherVersion.state).toEqual(fullReplay.state);
    await otherVersion.stop();
  });
});

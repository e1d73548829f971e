/**
 * Rebuilding projections, embedded (SQLite log and read models) and distributed (NATS JetStream
 * log, MariaDB read models): projections rebuilt together read the log once and end as separate
 * rebuilds do; a poison event is quarantined in the projection that fails on it only; after a
 * rebuild every checkpoint is at the head the rebuild reached, so the next start reads nothing
 * before it (the runner's and the live views' catch-up start from those checkpoints).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { NatsEventStore } from '../../src/adapters/event-store/nats.js';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import type { EventStore, ReadAllOptions, StoredEvent, SubscribeOptions } from '../../src/ports/event-store.js';
import type { Projection } from '../../src/projections/runtime/projection.js';
import { listQuarantine } from '../../src/projections/runtime/quarantine.js';
import { ProjectionRunner, readCheckpoint } from '../../src/projections/runtime/runner.js';
import { freshDatabase } from '../support/databases.js';
import { uniqueSuffix } from '../support/services.js';

const logger = pino({ level: 'silent' });
const services = inject('services');
const urls = inject('serviceUrls');

type CountTables = Record<string, { stream: string; events: number }>;

/** Counts events of one type per stream into its own table (applying anything twice shows). */
function counting(name: string, eventType: string, failOn?: (e: StoredEvent) => boolean): Projection {
  const table = `test_rebuild_${name}`;
  const projection = {
    name,
    version: 1,
    eventTypes: [eventType],
    async apply(trx: Kysely<never>, event: StoredEvent) {
      if (failOn?.(event)) throw new Error(`injected failure at ${event.stream}@${event.version}`);
      const db = trx as unknown as Kysely<CountTables>;
      const updated = await db
        .updateTable(table)
        .set((eb) => ({ events: eb('events', '+', 1) }))
        .where('stream', '=', event.stream)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) await db.insertInto(table).values({ stream: event.stream, events: 1 }).execute();
    },
    async reset(trx: Kysely<never>) {
      await (trx as unknown as Kysely<CountTables>).deleteFrom(table).execute();
    },
  };
  return projection as unknown as Projection;
}

async function rows(sql: SqlDatabase, name: string) {
  return (sql.db as unknown as Kysely<CountTables>).selectFrom(`test_rebuild_${name}`).selectAll().orderBy('stream').execute();
}

/** The store, with every read of the log and every subscription's start recorded. */
function recorded(store: EventStore) {
  const reads: Array<{ after: number; commits: number; events: number }> = [];
  const subscribedAfter: number[] = [];
  const wrapper = Object.create(store) as EventStore;
  wrapper.readAll = async (options: ReadAllOptions) => {
    const commits = await store.readAll(options);
    reads.push({ after: options.after, commits: commits.length, events: commits.reduce((n, c) => n + c.events.length, 0) });
    return commits;
  };
  wrapper.subscribe = (options: SubscribeOptions) => {
    subscribedAfter.push(options.after);
    return store.subscribe(options);
  };
  return { store: wrapper, reads, subscribedAfter };
}

/**
 * `commits` commits over 4 streams: each holds an `A` event, every third a `B` event too; then
 * `tail` commits of neither (the log's recent traffic none of them reads, as usage events are to
 * the maintenance projection).
 */
async function appendLog(store: EventStore, commits: number, tail = 5) {
  for (let i = 0; i < commits; i++) {
    const events = [{ type: 'A', data: { i } }];
    if (i % 3 === 0) events.push({ type: 'B', data: { i } });
    await store.append(`rebuild-s${i % 4}`, events, { expectedVersion: 'any', tenantId: 't1' });
  }
  for (let i = 0; i < tail; i++) await store.append('rebuild-other', [{ type: 'Unread', data: { i } }], { expectedVersion: 'any', tenantId: 't1' });
}

interface Setup {
  label: string;
  available: boolean;
  open(): Promise<{ store: EventStore; sql: SqlDatabase; cleanup: () => Promise<void> }>;
}

const setups: Setup[] = [
  {
    label: 'embedded (SQLite log, SQLite read models)',
    available: true,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'sy-rebuild-'));
      const store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
      const fresh = await freshDatabase('sqlite', urls);
      return {
        store,
        sql: fresh.sql,
        cleanup: async () => {
          await store.close();
          await fresh.cleanup();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    label: 'distributed (NATS log, MariaDB read models)',
    available: services.nats && services.mysql,
    async open() {
      const suffix = uniqueSuffix();
      const store = await NatsEventStore.connect({ servers: urls.nats, streamName: `SY_TEST_${suffix}`, subjectPrefix: `sytest.${suffix}` });
      const fresh = await freshDatabase('mysql', urls);
      return {
        store,
        sql: fresh.sql,
        cleanup: async () => {
          await store.deleteStream();
          await store.close();
          await fresh.cleanup();
        },
      };
    },
  },
];

describe.each(setups.map((s) => [s.label, s] as const))('rebuild, %s', (_label, setup) => {
  let store: EventStore;
  let sql: SqlDatabase;
  let cleanup: () => Promise<void>;
  const toStop: ProjectionRunner[] = [];

  beforeEach(async (ctx) => {
    if (!setup.available) ctx.skip();
    ({ store, sql, cleanup } = await setup.open());
    for (const name of ['a', 'b']) {
      await sql.db.schema
        .createTable(`test_rebuild_${name}`)
        .addColumn('stream', 'varchar(191)', (c) => c.primaryKey())
        .addColumn('events', 'integer', (c) => c.notNull())
        .execute();
    }
  });

  afterEach(async () => {
    if (!setup.available) return;
    for (const r of toStop.splice(0)) await r.stop();
    await cleanup();
  });

  const projections = () => [counting('a', 'A'), counting('b', 'B')];

  it('after a rebuild every checkpoint is at the head, and the next start reads nothing before it', async () => {
    // A whole read of the log's end (500 commits) holds nothing these projections read.
    await appendLog(store, 30, 520);
    const head = await store.headPosition();
    // Projected live first, as an installation is; then rebuilt offline (the CLI's path).
    const live = new ProjectionRunner(store, sql.db, projections(), logger);
    await live.start();
    await live.waitFor(head);
    await live.stop();
    // Stored by the time the rebuild resolves: a one-shot command exits right after.
    await new ProjectionRunner(store, sql.db, projections(), logger).rebuild('a');
    expect(await readCheckpoint(sql.db, 'a')).toBe(head);
    await new ProjectionRunner(store, sql.db, projections(), logger).rebuildTogether(['a', 'b']);
    expect(await readCheckpoint(sql.db, 'a')).toBe(head);
    expect(await readCheckpoint(sql.db, 'b')).toBe(head);

    const watched = recorded(store);
    const next = new ProjectionRunner(watched.store, sql.db, projections(), logger);
    toStop.push(next);
    await next.start();
    await next.waitFor(head);
    expect(watched.reads.filter((r) => r.after < head)).toEqual([]);
    await expect.poll(() => watched.subscribedAfter).toEqual([head, head]);
    expect((await rows(sql, 'a')).map((r) => r.events)).toEqual([8, 8, 7, 7]);
  });

  it('projections rebuilt together read the log once and end as separate rebuilds do', async () => {
    await appendLog(store, 1100); // more than two batches of the runner's reads
    const head = await store.headPosition();
    const separately = new ProjectionRunner(store, sql.db, projections(), logger);
    await separately.rebuild('a');
    await separately.rebuild('b');
    const expected = { a: await rows(sql, 'a'), b: await rows(sql, 'b') };
    expect(expected.a.reduce((n, r) => n + r.events, 0)).toBe(1100);
    expect(expected.b.reduce((n, r) => n + r.events, 0)).toBe(367);

    const watched = recorded(store);
    await new ProjectionRunner(watched.store, sql.db, projections(), logger).rebuildTogether(['a', 'b']);
    // One pass: every commit read once, each read starting where the previous one ended.
    expect(watched.reads.reduce((n, r) => n + r.commits, 0)).toBe(head);
    expect(new Set(watched.reads.map((r) => r.after)).size).toBe(watched.reads.length);
    expect({ a: await rows(sql, 'a'), b: await rows(sql, 'b') }).toEqual(expected);
    expect(await readCheckpoint(sql.db, 'a')).toBe(head);
    expect(await readCheckpoint(sql.db, 'b')).toBe(head);
  });

  it('reads about as many events at a time as it aims at, whatever the size of the commits', async () => {
    // 100 commits of 10 events: the first read (40 commits here) shows the size of a commit.
    for (let i = 0; i < 100; i++) {
      await store.append(`rebuild-s${i % 4}`, Array.from({ length: 10 }, () => ({ type: 'A', data: { i } })), { expectedVersion: 'any', tenantId: 't1' });
    }
    // Offline (the CLI), then running (the catch-up of relaunched projections, as at a start).
    for (const running of [false, true]) {
      const watched = recorded(store);
      const runner = new ProjectionRunner(watched.store, sql.db, projections(), logger, { replayBatchEvents: 100, replayBatchCommits: 40 });
      if (running) {
        toStop.push(runner);
        await runner.start();
      }
      await runner.rebuildTogether(['a', 'b']);
      const [first, ...rest] = watched.reads.filter((r) => r.commits > 0);
      expect(first!.events).toBe(400);
      // Offline, one pass: 6 reads; running, each projection's catch-up reads (sharing what it can).
      if (!running) expect(rest.map((r) => r.events)).toEqual([100, 100, 100, 100, 100, 100]);
      for (const read of rest) expect(read.events).toBeLessThanOrEqual(100);
      expect((await rows(sql, 'a')).reduce((n, r) => n + r.events, 0)).toBe(1000);
    }
  });

  it('a poison event is quarantined in the projection that fails on it; the others rebuild in full', async () => {
    await appendLog(store, 12);
    const head = await store.headPosition();
    const poisoned = [counting('a', 'A', (e) => e.stream === 'rebuild-s1' && e.version === 2), counting('b', 'B')];
    const runner = new ProjectionRunner(store, sql.db, poisoned, logger, { applyRetryDelayMs: 5 });
    await runner.rebuildTogether(['a', 'b']);
    expect((await rows(sql, 'a')).map((r) => [r.stream, r.events])).toEqual([
      ['rebuild-s0', 3],
      ['rebuild-s1', 2],
      ['rebuild-s2', 3],
      ['rebuild-s3', 3],
    ]);
    expect((await rows(sql, 'b')).reduce((n, r) => n + r.events, 0)).toBe(4);
    expect((await listQuarantine(sql.db)).map((q) => [q.projection, q.stream, q.event_version])).toEqual([['a', 'rebuild-s1', 2]]);
    expect((await runner.status()).map((s) => [s.name, s.lag, s.quarantined])).toEqual([
      ['a', 0, 1],
      ['b', 0, 0],
    ]);
    expect(await readCheckpoint(sql.db, 'a')).toBe(head);
  });

  it('rebuilds projections that are running together, and they keep tailing', async () => {
    await appendLog(store, 20);
    const runner = new ProjectionRunner(store, sql.db, projections(), logger);
    toStop.push(runner);
    await runner.start();
    await runner.waitFor(await store.headPosition());
    await runner.rebuildTogether(['a', 'b']);
    expect((await rows(sql, 'a')).reduce((n, r) => n + r.events, 0)).toBe(20);
    await appendLog(store, 4, 0);
    await runner.waitFor(await store.headPosition());
    expect((await rows(sql, 'a')).reduce((n, r) => n + r.events, 0)).toBe(24);
    expect((await rows(sql, 'b')).reduce((n, r) => n + r.events, 0)).toBe(9);
  });

  it('refuses unknown names before resetting anything', async () => {
    await appendLog(store, 3, 0);
    const runner = new ProjectionRunner(store, sql.db, projections(), logger);
    await runner.rebuildTogether(['a']);
    await expect(runner.rebuildTogether(['a', 'nope'])).rejects.toThrow('unknown projection "nope"');
    expect((await rows(sql, 'a')).length).toBe(3);
  });
});

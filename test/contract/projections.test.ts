/**
 * The projection runner against every read-model database that runs here (SQLite, MariaDB,
 * PostgreSQL): catch-up, live tailing, exactly-once application under redelivery and under two
 * instances, rebuild equals live, version bump rebuilds, failures retry from the checkpoint, an
 * event that keeps failing is quarantined (and replayed after a fix), an outage quarantines nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { openSqlDatabase, type ReadModelConfig, type SqlDatabase } from '../../src/adapters/sql/database.js';
import type { EventStore, StoredEvent } from '../../src/ports/event-store.js';
import type { Projection } from '../../src/projections/runtime/projection.js';
import { listQuarantine, replayQuarantine } from '../../src/projections/runtime/quarantine.js';
import { ProjectionRunner, readCheckpoint } from '../../src/projections/runtime/runner.js';
import { freshDatabase, dialectsHere } from '../support/databases.js';

interface TallyTables {
  test_tally: { stream: string; events: number; last_version: number };
}

const logger = pino({ level: 'silent' });

/** A projection that counts events per stream: applying anything twice shows up in the count. */
function tally(options: { version?: number; failOn?: (e: StoredEvent) => boolean } = {}): Projection & { applied: number } {
  const projection = {
    name: 'tally',
    version: options.version ?? 1,
    eventTypes: ['Counted'],
    applied: 0,
    async apply(trx: Kysely<never>, event: StoredEvent) {
      if (options.failOn?.(event)) throw new Error(`injected failure at ${event.stream}@${event.version}`);
      const db = trx as unknown as Kysely<TallyTables>;
      const updated = await db
        .updateTable('test_tally')
        .set((eb) => ({ events: eb('events', '+', 1), last_version: event.version }))
        .where('stream', '=', event.stream)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) await db.insertInto('test_tally').values({ stream: event.stream, events: 1, last_version: event.version }).execute();
      projection.applied++;
    },
    async reset(trx: Kysely<never>) {
      await (trx as unknown as Kysely<TallyTables>).deleteFrom('test_tally').execute();
    },
  };
  return projection as unknown as Projection & { applied: number };
}

async function rows(sql: SqlDatabase) {
  return (sql.db as unknown as Kysely<TallyTables>).selectFrom('test_tally').selectAll().orderBy('stream').execute();
}

/** Delivers every commit twice, as an at-least-once bus may. */
function duplicating(store: EventStore): EventStore {
  const wrapper = Object.create(store) as EventStore;
  wrapper.subscribe = (options) =>
    store.subscribe({
      ...options,
      onCommit: async (commit) => {
        await options.onCommit(commit);
        await options.onCommit(commit);
      },
      onCommits:
        options.onCommits &&
        (async (commits) => {
          await options.onCommits!(commits);
          await options.onCommits!(commits);
        }),
    });
  return wrapper;
}

async function appendTraffic(store: EventStore, commits: number, streams = 5) {
  for (let i = 0; i < commits; i++) {
    const events = [{ type: 'Counted', data: { i } }];
    if (i % 3 === 0) events.push({ type: 'Ignored', data: { i } });
    await store.append(`tally-s${i % streams}`, events, { expectedVersion: 'any', tenantId: 't1' });
  }
}

const services = inject('services');
const urls = inject('serviceUrls');
const dialects = dialectsHere(services);

describe.each(dialects)('projection runner on %s', (dialect, available) => {
  let store: SqliteEventStore;
  let sql: SqlDatabase;
  let cleanupDb: () => Promise<void>;
  let dbConfig: ReadModelConfig;
  let dir: string;
  const toStop: ProjectionRunner[] = [];
  const extraHandles: SqlDatabase[] = [];

  beforeEach(async (ctx) => {
    if (!available) ctx.skip();
    dir = mkdtempSync(join(tmpdir(), 'sy-proj-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    const fresh = await freshDatabase(dialect, urls);
    sql = fresh.sql;
    cleanupDb = fresh.cleanup;
    dbConfig = fresh.config;
    await sql.db.schema
      .createTable('test_tally')
      .addColumn('stream', 'varchar(191)', (c) => c.primaryKey())
      .addColumn('events', 'integer', (c) => c.notNull())
      .addColumn('last_version', 'integer', (c) => c.notNull())
      .execute();
  });

  afterEach(async () => {
    if (!available) return;
    for (const r of toStop.splice(0)) await r.stop();
    for (const h of extraHandles.splice(0)) await h.close();
    await store.close();
    await cleanupDb();
    rmSync(dir, { recursive: true, force: true });
  });

  function runner(projection: Projection, on: SqlDatabase = sql, eventStore: EventStore = store) {
    const r = new ProjectionRunner(eventStore, on.db, [projection], logger, { retryDelayMs: 20 });
    toStop.push(r);
    return r;
  }

  it('catches up on the existing log, then tails live commits; irrelevant events cost nothing', async () => {
    await appendTraffic(store, 20);
    const p = tally();
    const r = runner(p);
    await r.start();
    await r.waitFor(await store.headPosition());
    await appendTraffic(store, 10);
    const head = await store.headPosition();
    await r.waitFor(head);
    const result = await rows(sql);
    expect(result.map((x) => x.events)).toEqual([6, 6, 6, 6, 6]);
    expect(await readCheckpoint(sql.db, 'tally')).toBeLessThanOrEqual(head);
    expect((await r.status())[0]).toMatchObject({ name: 'tally', lag: 0 });
  });

  it('shares each catch-up read of the log among the projections replaying side by side', async () => {
    await appendTraffic(store, 1200); // more than one read's worth of commits (500)
    let reads = 0;
    const counting = Object.create(store) as EventStore;
    counting.readAll = (options) => {
      reads++;
      return store.readAll(options);
    };
    // Projections that only count what they are given (no table of their own to contend on).
    const applied = new Map<string, number>();
    const projections = ['count_a', 'count_b', 'count_c'].map(
      (name): Projection => ({
        name,
        version: 1,
        eventTypes: ['Counted'],
        apply: async () => {
          applied.set(name, (applied.get(name) ?? 0) + 1);
        },
        reset: async () => undefined,
      }),
    );
    const r = new ProjectionRunner(counting, sql.db, projections, logger);
    toStop.push(r);
    await r.start();
    await r.waitFor(await store.headPosition(), { timeoutMs: 30_000 });
    // Three batches of the log: three reads in all when shared (nine if each projection read its own).
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThan(3 * 3);
    expect([...applied.values()]).toEqual([1200, 1200, 1200]);
  });

  it('applies each commit once when the bus delivers it twice', async () => {
    await appendTraffic(store, 15);
    const p = tally();
    const r = runner(p, sql, duplicating(store));
    await r.start();
    await r.waitFor(await store.headPosition());
    expect((await rows(sql)).reduce((n, x) => n + x.events, 0)).toBe(15);
    expect(p.applied).toBe(15);
  });

  it('applies live commits that queued up behind a slow projection together, each once, also when delivered twice', async () => {
    const slow = tally();
    const apply = slow.apply.bind(slow);
    slow.apply = async (trx, event) => {
      await new Promise((resolve) => setTimeout(resolve, 2));
      return apply(trx, event);
    };
    const deliveries: number[] = [];
    const twice = duplicating(store);
    const observed = Object.create(twice) as EventStore;
    observed.subscribe = (options) =>
      twice.subscribe({
        ...options,
        onCommits: async (commits) => {
          deliveries.push(commits.length);
          await options.onCommits!(commits);
        },
      });
    const r = runner(slow, sql, observed);
    await r.start();
    await appendTraffic(store, 60);
    await r.waitFor(await store.headPosition());
    expect(deliveries.some((n) => n > 1)).toBe(true);
    expect((await rows(sql)).reduce((n, x) => n + x.events, 0)).toBe(60);
    expect(slow.applied).toBe(60);
  });

  it('applies each commit once with two instances projecting side by side', async () => {
    // A second instance with its own connections. better-sqlite3 waits for locks synchronously,
    // so two SQLite handles in ONE process would block each other; there the handle is shared.
    const second = dialect === 'sqlite' ? sql : await openSqlDatabase(dbConfig);
    if (second !== sql) extraHandles.push(second);
    const a = runner(tally(), sql);
    const b = runner(tally(), second);
    await Promise.all([a.start(), b.start()]);
    await Promise.all([appendTraffic(store, 40), appendTraffic(store, 40, 3)]);
    const head = await store.headPosition();
    await Promise.all([a.waitFor(head), b.waitFor(head)]);
    const result = await rows(sql);
    expect(result.reduce((n, x) => n + x.events, 0)).toBe(80);
    const byStream = Object.fromEntries(result.map((x) => [x.stream, x.events]));
    expect(byStream).toEqual({ 'tally-s0': 8 + 14, 'tally-s1': 8 + 13, 'tally-s2': 8 + 13, 'tally-s3': 8, 'tally-s4': 8 });
  });

  it('applies catch-up commits once when another instance applied some of a transaction\'s commits first', async () => {
    await appendTraffic(store, 30);
    const p = tally();
    const other = runner(p);
    // The other instance applies the first ten commits just after this one has read the log:
    // this one's claim for all thirty (position < the first) fails, and it goes commit by commit.
    let overtaken = false;
    const racing = Object.create(store) as EventStore;
    racing.readAll = async (options) => {
      const commits = await store.readAll(options);
      if (!overtaken && commits.length >= 10) {
        overtaken = true;
        await other.catchUpOnce(p, 0, commits[9]!.position);
      }
      return commits;
    };
    const r = runner(p, sql, racing);
    await r.start();
    await r.waitFor(await store.headPosition());
    expect(overtaken).toBe(true);
    expect((await rows(sql)).reduce((n, x) => n + x.events, 0)).toBe(30);
    expect(p.applied).toBe(30);
  });

  it('rebuilds to exactly the live state, also while another instance keeps projecting', async () => {
    await appendTraffic(store, 25);
    const live = runner(tally());
    await live.start();
    await live.waitFor(await store.headPosition());
    const before = await rows(sql);

    const other = runner(tally());
    await other.start();
    await other.rebuild('tally');
    await appendTraffic(store, 5);
    const head = await store.headPosition();
    await Promise.all([live.waitFor(head), other.waitFor(head)]);
    const after = await rows(sql);
    expect(after.reduce((n, x) => n + x.events, 0)).toBe(30);

    // And a rebuild with no runner started (the CLI path) gives the same table again.
    await live.stop();
    await other.stop();
    const offline = new ProjectionRunner(store, sql.db, [tally()], logger);
    await offline.rebuild('tally');
    expect(await rows(sql)).toEqual(after);
    expect(before.reduce((n, x) => n + x.events, 0)).toBe(25);
  });

  it('rebuilds by itself when the projection version changes', async () => {
    await appendTraffic(store, 10);
    const v1 = runner(tally({ version: 1 }));
    await v1.start();
    await v1.waitFor(await store.headPosition());
    await v1.stop();
    // Simulate a v1 bug that left a wrong row behind; v2 must replace the table.
    await (sql.db as unknown as Kysely<TallyTables>).updateTable('test_tally').set({ events: 999 }).execute();
    const v2p = tally({ version: 2 });
    const v2 = runner(v2p);
    await v2.start();
    await v2.waitFor(await store.headPosition());
    expect((await rows(sql)).map((x) => x.events)).toEqual([2, 2, 2, 2, 2]);
    expect(v2p.applied).toBe(10);
  });

  it('rolls back a failed commit and retries it from the checkpoint', async () => {
    await appendTraffic(store, 10);
    let failures = 0;
    const p = tally({
      failOn: (e) => {
        if (e.stream === 'tally-s2' && e.version === 2 && failures < 2) {
          failures++;
          return true;
        }
        return false;
      },
    });
    const r = runner(p);
    await r.start();
    await r.waitFor(await store.headPosition());
    expect(failures).toBe(2);
    expect((await rows(sql)).map((x) => x.events)).toEqual([2, 2, 2, 2, 2]);
  });

  it('quarantines an event that keeps failing, moves past it (the commit\'s other events apply), and replays it after a fix', async () => {
    let broken = true;
    // The first event of tally-s2@2 and of a two-event commit fail for as long as `broken`.
    const p = tally({ failOn: (e) => broken && ((e.stream === 'tally-s2' && e.version === 2) || (e.stream === 'tally-pair' && e.version === 1)) });
    await appendTraffic(store, 10);
    await store.append('tally-pair', [{ type: 'Counted', data: {} }, { type: 'Counted', data: {} }], { expectedVersion: 0, tenantId: 't2' });
    const r = new ProjectionRunner(store, sql.db, [p], logger, { retryDelayMs: 20, applyRetryDelayMs: 5 });
    toStop.push(r);
    await r.start();
    await r.waitFor(await store.headPosition());
    expect((await rows(sql)).map((x) => [x.stream, x.events])).toEqual([
      ['tally-pair', 1],
      ['tally-s0', 2],
      ['tally-s1', 2],
      ['tally-s2', 1],
      ['tally-s3', 2],
      ['tally-s4', 2],
    ]);
    expect((await r.status())[0]).toMatchObject({ name: 'tally', lag: 0, quarantined: 2 });
    const quarantined = await listQuarantine(sql.db);
    expect(quarantined.map((q) => [q.projection, q.stream, q.event_version, q.event_type, q.replayed_at])).toEqual([
      ['tally', 'tally-s2', 2, 'Counted', null],
      ['tally', 'tally-pair', 1, 'Counted', null],
    ]);
    expect(quarantined[0]!.error).toContain('injected failure at tally-s2@2');
    expect(quarantined[1]!.tenant_id).toBe('t2');

    // Still tailing: later commits apply.
    await appendTraffic(store, 5);
    await r.waitFor(await store.headPosition());
    expect((await rows(sql)).map((x) => x.events)).toEqual([1, 3, 3, 2, 3, 3]);

    // A replay before the fix leaves them quarantined, with the error.
    const early = await replayQuarantine(sql.db, store, [p]);
    expect(early.map((o) => o.result)).toEqual(['failed', 'failed']);
    expect((await r.status())[0]!.quarantined).toBe(2);

    broken = false;
    const replayed = await replayQuarantine(sql.db, store, [p], ['tally']);
    expect(replayed.map((o) => [o.event_version, o.result])).toEqual([
      [2, 'applied'],
      [1, 'applied'],
    ]);
    expect((await rows(sql)).map((x) => x.events)).toEqual([2, 3, 3, 3, 3, 3]);
    expect((await r.status())[0]!.quarantined).toBe(0);
    expect(await listQuarantine(sql.db)).toEqual([]);
    expect((await listQuarantine(sql.db, { includeReplayed: true })).every((q) => q.replayed_at !== null)).toBe(true);
    // Applied once: a second replay has nothing left to do.
    expect(await replayQuarantine(sql.db, store, [p])).toEqual([]);
    expect((await rows(sql)).map((x) => x.events)).toEqual([2, 3, 3, 3, 3, 3]);
  });

  it('a rebuild meets the poison event again: it is quarantined once more and the rebuild completes', async () => {
    const p = tally({ failOn: (e) => e.stream === 'tally-s1' && e.version === 1 });
    await appendTraffic(store, 10);
    const r = new ProjectionRunner(store, sql.db, [p], logger, { retryDelayMs: 20, applyRetryDelayMs: 5 });
    toStop.push(r);
    await r.start();
    await r.waitFor(await store.headPosition());
    expect((await listQuarantine(sql.db)).length).toBe(1);
    await r.rebuild('tally');
    expect((await rows(sql)).map((x) => x.events)).toEqual([2, 1, 2, 2, 2]);
    expect((await listQuarantine(sql.db)).map((q) => [q.stream, q.event_version])).toEqual([['tally-s1', 1]]);
  });

  it.skipIf(dialect === 'sqlite')('quarantines nothing while the read-model database is unreachable, and catches up once it is back', async () => {
    await appendTraffic(store, 5);
    // The runner reaches the database through a TCP relay that can be cut: a real outage.
    const target = dbConfig as Extract<ReadModelConfig, { host: string }>;
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as AddressInfo).port;
    const viaRelay = await openSqlDatabase({ ...target, port, maxConnections: 2, connMaxLifetimeMs: 60_000 });
    extraHandles.push(viaRelay);
    try {
      const p = tally();
      const r = new ProjectionRunner(store, viaRelay.db, [p], logger, { retryDelayMs: 20, applyRetryDelayMs: 5, applyAttempts: 2 });
      toStop.push(r);
      await r.start();
      await r.waitFor(await store.headPosition());
      // Cut: refuse new connections and drop the open ones; then more traffic.
      relay.close();
      for (const s of sockets) s.destroy();
      await appendTraffic(store, 5);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // Back: the runner applies what it missed, none of it quarantined.
      relay.listen(port, '127.0.0.1');
      await r.waitFor(await store.headPosition(), { timeoutMs: 20_000 });
      expect((await rows(sql)).map((x) => x.events)).toEqual([2, 2, 2, 2, 2]);
      expect(await listQuarantine(sql.db)).toEqual([]);
      await r.stop(); // while the relay still relays
    } finally {
      relay.close();
      for (const s of sockets) s.destroy();
    }
  });
});

/**
 * The streaming audit (src/audit): both sides paged by key and merged, on every read-model
 * database that runs here (SQLite, MariaDB, PostgreSQL) against a SQLite scratch replay, with
 * pages of two rows so that every difference sits across page boundaries; text keys whose byte
 * order differs from UTF-16 and case order, and numeric keys past one digit. Then, on SQLite,
 * snapshots: an audit continued from a snapshot gives the report a full replay gives, and a
 * snapshot altered after it was sealed is not used.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import { openSqlDatabase, type SqlDatabase } from '../../src/adapters/sql/database.js';
import type { CompareCounters } from '../../src/audit/compare.js';
import { auditReplay, type AuditDeps, type AuditSettings } from '../../src/audit/replay.js';
import { USAGE_RECORDED, type UsageData } from '../../src/commands/usage/events.js';
import { ProjectionRunner } from '../../src/projections/runtime/runner.js';
import { usageProjection } from '../../src/projections/usage.js';
import { dialectsHere, freshDatabase } from '../support/databases.js';

const logger = pino({ level: 'silent' });
const services = inject('services');
const urls = inject('serviceUrls');
const dialects = dialectsHere(services);

/** User ids whose byte order is neither UTF-16 order nor case-insensitive order. */
const USERS = ['B', 'a', 'é', '\u{1F600}', '\uFFFD', 'Z'];

function usage(i: number): UsageData {
  return {
    request_id: `req-${i}`,
    tenant_id: 't1',
    user_id: USERS[i % USERS.length]!,
    key_id: null,
    channel_id: 'ch_1',
    provider: 'openai',
    model_requested: 'm',
    model_served: 'm',
    prompt_tokens: 100 + i,
    completion_tokens: 7,
    total_tokens: 107 + i,
    usage_source: 'upstream',
    stream: false,
    status: 200,
    error_code: null,
    latency_ms: 10,
    ttft_ms: null,
    attempts: 1,
    started_at: new Date(Date.UTC(2024, 4, 1, i % 4, i)).toISOString(),
  };
}

const scope = { tenantId: 't1', from: new Date('2024-05-01T00:00:00Z'), to: new Date('2024-05-02T00:00:00Z') };

async function appendUsage(store: SqliteEventStore, from: number, to: number): Promise<void> {
  // One event per commit: positions past 9, so numeric keys must not sort as text.
  for (let i = from; i < to; i++) {
    const version = (await store.readStream('usage-test')).length;
    await store.append('usage-test', [{ type: USAGE_RECORDED, data: usage(i) as unknown as Record<string, unknown> }], { expectedVersion: version, tenantId: 't1' });
  }
}

async function project(store: SqliteEventStore, sql: SqlDatabase): Promise<void> {
  const runner = new ProjectionRunner(store, sql.db, [usageProjection], logger);
  await runner.start();
  await runner.waitFor(await store.headPosition());
  await runner.stop();
}

describe.each(dialects)('streaming audit compare, live on %s', (dialect, available) => {
  let store: SqliteEventStore;
  let sql: SqlDatabase;
  let cleanup: () => Promise<void>;
  let dir: string;

  beforeEach(async (ctx) => {
    if (!available) ctx.skip();
    dir = mkdtempSync(join(tmpdir(), 'sy-audit-stream-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    ({ sql, cleanup } = await freshDatabase(dialect, urls));
  });
  afterEach(async () => {
    await store?.close();
    await cleanup?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finds a missing, an extra and a different row across pages of two, and holds no more than a page per side', async () => {
    await appendUsage(store, 0, 14);
    await project(store, sql);
    const settings: AuditSettings = { dir: join(dir, 'audit'), pageSize: 2, snapshotEvery: 0, snapshotsKept: 1, secret: 'audit-test-secret-0123456789' };
    const counters: CompareCounters = { pages: 0, maxPageRows: 0 };
    const deps: AuditDeps = { store, live: sql.db, liveDialect: sql.dialect, logger, projections: [usageProjection], settings, counters };

    const clean = await auditReplay(deps, scope);
    expect(clean.differences).toBe(0);
    expect(clean.tables.map((t) => [t.table, t.live_rows, t.replayed_rows])).toEqual([
      ['usage_requests', 14, 14],
      ['usage_hourly', 12, 12],
      ['usage_daily', 6, 6],
    ]);
    expect(counters.maxPageRows).toBe(2);
    expect(counters.pages).toBeGreaterThanOrEqual(2 * (7 + 6 + 3));

    const db = sql.db;
    // Missing: a request row in the middle of the log (a page boundary on each side).
    await db.deleteFrom('usage_requests').where('request_id', '=', 'req-9').execute();
    // Extra: a rollup row the log never produced, keyed between others.
    const template = await db.selectFrom('usage_hourly').selectAll().where('user_id', '=', 'é').orderBy('hour').executeTakeFirstOrThrow();
    await db.insertInto('usage_hourly').values({ ...template, user_id: 'éa' }).execute();
    // Different: one value of one daily row.
    await db.updateTable('usage_daily').set({ prompt_tokens: 1 }).where('tenant_id', '=', 't1').where('user_id', '=', '\u{1F600}').execute();

    const report = await auditReplay(deps, scope);
    expect(report.differences).toBe(3);
    const [requests, hourly, daily] = report.tables;
    expect(requests).toMatchObject({ live_rows: 13, replayed_rows: 14, differences: 1, extra: [], different: [] });
    expect(requests!.missing.map((m) => m.key)).toEqual([{ request_key: expect.stringContaining('req-9') }]);
    expect(hourly).toMatchObject({ live_rows: 13, replayed_rows: 12, differences: 1, missing: [], different: [] });
    expect(hourly!.extra.map((e) => e.key)).toEqual([{ hour: template.hour, user_id: 'éa', key_id: '', channel_id: 'ch_1', model: 'm' }]);
    expect(daily).toMatchObject({ differences: 1, missing: [], extra: [] });
    expect(daily!.different).toEqual([{ key: expect.objectContaining({ user_id: '\u{1F600}' }), columns: { prompt_tokens: { live: '1', replayed: expect.any(String) } } }]);
    expect(counters.maxPageRows).toBe(2);
  });
});

describe('audit snapshots (embedded)', () => {
  let store: SqliteEventStore;
  let sql: SqlDatabase;
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-audit-snap-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    sql = await openSqlDatabase({ kind: 'sqlite', file: join(dir, 'readmodels.db') });
    const { migrateToLatest } = await import('../../src/adapters/sql/migrate.js');
    await migrateToLatest(sql.db);
  });
  afterEach(async () => {
    await store?.close();
    await sql?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replay continued from a snapshot reports what a full replay reports; a snapshot altered after sealing is not used', async () => {
    const settings: AuditSettings = { dir: join(dir, 'audit'), pageSize: 3, snapshotEvery: 1, snapshotsKept: 2, secret: 'audit-test-secret-0123456789' };
    const deps: AuditDeps = { store, live: sql.db, liveDialect: 'sqlite', logger, projections: [usageProjection], settings };
    const full = (window = scope) => auditReplay({ ...deps, settings: { ...settings, snapshotEvery: 0, dir: join(dir, 'no-snapshots') } }, window);
    const snapshotIds = () => readdirSync(join(dir, 'audit', 'snapshots')).filter((f) => f.endsWith('.json')).map((f) => f.slice('snapshot-'.length, -'.json'.length));

    await appendUsage(store, 0, 10);
    await project(store, sql);
    const first = await auditReplay(deps, scope);
    expect(first.replay).toMatchObject({ from_snapshot: null, events_replayed: 10, rejected_snapshots: [] });
    expect(first.replay.saved_snapshot).toBeTruthy();
    expect(first.differences).toBe(0);

    // More traffic, then an audit of a window: it continues from the snapshot (5 events, not 15).
    await appendUsage(store, 10, 15);
    await project(store, sql);
    // A tampered live row, so that the reports have something to agree on.
    await sql.db.updateTable('usage_hourly').set({ total_tokens: 999_999 }).where('tenant_id', '=', 't1').where('user_id', '=', 'a').execute();
    const window = { ...scope, from: new Date('2024-05-01T01:00:00Z'), to: new Date('2024-05-01T03:00:00Z') };
    const continued = await auditReplay(deps, window);
    expect(continued.replay).toMatchObject({ from_snapshot: { id: first.replay.saved_snapshot }, events_replayed: 5, rejected_snapshots: [] });
    const reference = await full(window);
    expect(reference.replay).toMatchObject({ from_snapshot: null, events_replayed: 15 });
    expect(continued.differences).toBeGreaterThan(0);
    const { replay: _a, ...continuedReport } = continued;
    const { replay: _b, ...referenceReport } = reference;
    expect(continuedReport).toEqual(referenceReport);
    expect(snapshotIds()).toHaveLength(2);

    // Alter the newest snapshot's replayed tables (as if to hide the tampered live row): its seal no longer matches.
    const newest = continued.replay.saved_snapshot!;
    const altered = await openSqlDatabase({ kind: 'sqlite', file: join(dir, 'audit', 'snapshots', `snapshot-${newest}.db`) });
    await altered.db.updateTable('usage_hourly').set({ total_tokens: 999_999 }).where('tenant_id', '=', 't1').where('user_id', '=', 'a').execute();
    await altered.close();
    const after = await auditReplay({ ...deps, settings: { ...settings, snapshotEvery: 0 } }, window);
    expect(after.replay.rejected_snapshots).toEqual([newest]);
    // The older snapshot, still sealed, is used instead; the tampered live row is still found.
    expect(after.replay.from_snapshot?.id).toBe(first.replay.saved_snapshot);
    const { replay: _c, ...afterReport } = after;
    expect(afterReport).toEqual(referenceReport);
  });
});

/**
 * The usage projection on every read-model database that runs here (SQLite, MariaDB,
 * PostgreSQL): exact rollups, duplicates ignored, usage queries, and the audit comparing that
 * live database with a SQLite scratch replay (values compared canonically across dialects).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import { auditReplay } from '../../src/audit/replay.js';
import { USAGE_RECORDED, type UsageData } from '../../src/commands/usage/events.js';
import { ProjectionRunner } from '../../src/projections/runtime/runner.js';
import { usageProjection } from '../../src/projections/usage.js';
import { queryUsage } from '../../src/queries/usage.js';
import { freshDatabase, dialectsHere } from '../support/databases.js';

const logger = pino({ level: 'silent' });
const services = inject('services');
const urls = inject('serviceUrls');
const dialects = dialectsHere(services);

function usage(i: number, overrides: Partial<UsageData> = {}): UsageData {
  return {
    request_id: `req-${i}`,
    tenant_id: 't1',
    user_id: i % 2 === 0 ? 'u-even' : 'u-odd',
    key_id: i % 3 === 0 ? 'key_3' : null,
    channel_id: 'ch_1',
    provider: 'openai',
    model_requested: 'm',
    model_served: 'm',
    prompt_tokens: 1000 + i,
    completion_tokens: 7,
    total_tokens: 1007 + i,
    usage_source: 'upstream',
    stream: false,
    status: 200,
    error_code: null,
    latency_ms: 10.25,
    ttft_ms: null,
    attempts: 1,
    started_at: new Date(Date.UTC(2024, 4, 1, i % 3, 30)).toISOString(),
    ...overrides,
  };
}

describe.each(dialects)('usage projection on %s', (dialect, available) => {
  let store: SqliteEventStore;
  let sql: SqlDatabase;
  let cleanup: () => Promise<void>;
  let dir: string;
  let runner: ProjectionRunner;

  beforeEach(async (ctx) => {
    if (!available) ctx.skip();
    dir = mkdtempSync(join(tmpdir(), 'sy-usage-proj-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    ({ sql, cleanup } = await freshDatabase(dialect, urls));
    runner = new ProjectionRunner(store, sql.db, [usageProjection], logger);
  });
  afterEach(async () => {
    if (!available) return;
    await runner.stop();
    await store.close();
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rolls usage up exactly, ignores duplicates, and agrees with a SQLite replay of the log', async () => {
    const events = Array.from({ length: 12 }, (_, i) => usage(i));
    await store.append('usage-a', events.slice(0, 6).map((data) => ({ type: USAGE_RECORDED, data })), { expectedVersion: 0, tenantId: 't1' });
    await store.append('other-x', [{ type: 'SomethingElse', data: {} }], { expectedVersion: 0, tenantId: 't1' });
    // The second batch repeats request 5 (a spool replayed after a crash) and has a failure.
    const failed = usage(12, { status: 502, error_code: 'upstream_error', prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    await store.append('usage-b', [...events.slice(5), failed].map((data) => ({ type: USAGE_RECORDED, data })), { expectedVersion: 0, tenantId: 't1' });
    await store.append('usage-c', [{ type: USAGE_RECORDED, data: usage(0, { tenant_id: 't2', request_id: 'other-tenant' }) }], { expectedVersion: 0, tenantId: 't2' });
    await runner.start();
    await runner.waitFor(await store.headPosition());

    const db = sql.db;
    expect(await db.selectFrom('usage_requests').select('request_key').where('tenant_id', '=', 't1').execute()).toHaveLength(13);
    const scope = { tenantId: 't1', from: new Date('2024-05-01T00:00:00Z'), to: new Date('2024-05-02T00:00:00Z') };
    const totalTokens = events.reduce((n, e) => n + e.total_tokens, 0);
    for (const groupBy of [[], ['hour'], ['user', 'key']] as const) {
      const { groups } = await queryUsage(db, scope, groupBy, 100);
      expect(groups.reduce((n, g) => n + g.total_tokens, 0), groupBy.join()).toBe(totalTokens);
      expect(groups.reduce((n, g) => n + g.requests, 0)).toBe(13);
      expect(groups.reduce((n, g) => n + g.errors, 0)).toBe(1);
      expect(groups.reduce((n, g) => n + g.latency_us_sum, 0)).toBe(13 * 10_250);
    }
    const byHour = await queryUsage(db, scope, ['hour'], 100);
    expect(byHour.source).toBe('usage_hourly');
    expect(byHour.groups.map((g) => [g.hour, g.requests])).toEqual([
      ['2024-05-01T00:00:00.000Z', 5],
      ['2024-05-01T01:00:00.000Z', 4],
      ['2024-05-01T02:00:00.000Z', 4],
    ]);
    const exact = await queryUsage(db, { ...scope, from: new Date('2024-05-01T00:30:00.001Z') }, ['user'], 100);
    expect(exact.source).toBe('usage_requests');
    expect(exact.groups.reduce((n, g) => n + g.requests, 0)).toBe(13 - 5);
    // "No key" is the group null, first, from the rollups and from the request rows alike.
    for (const from of ['2024-05-01T00:00:00.000Z', '2024-05-01T00:00:00.001Z']) {
      const byKey = await queryUsage(db, { ...scope, from: new Date(from) }, ['key'], 100);
      expect(byKey.groups.map((g) => [g.key_id, g.requests]), byKey.source).toEqual([
        [null, 8],
        ['key_3', 5],
      ]);
    }

    // The audit: this database against a scratch SQLite replay of the same log.
    const audit = () => auditReplay({ store, live: db, logger, projections: [usageProjection] }, scope);
    const clean = await audit();
    expect(clean.differences).toBe(0);
    expect(clean.tables.map((t) => [t.table, t.live_rows, t.replayed_rows])).toEqual([
      ['usage_requests', 13, 13],
      ['usage_hourly', 6, 6],
      ['usage_daily', 4, 4],
    ]);
    await db.updateTable('usage_daily').set({ prompt_tokens: 1 }).where('tenant_id', '=', 't1').where('user_id', '=', 'u-odd').where('key_id', '=', 'key_3').execute();
    const tampered = await audit();
    expect(tampered.differences).toBe(1);
    expect(tampered.tables[2]!.different[0]).toMatchObject({ key: { user_id: 'u-odd', key_id: 'key_3' }, columns: { prompt_tokens: { live: '1' } } });
  });
});

/**
 * The usage, billing and key_usage projections fold a commit's usage events as one batch
 * (compiled multi-row inserts, one de-duplication read per 128 request ids, one write per rollup
 * row, balance, subscription and key touched). On every read-model database that runs here, a
 * log that exercises every corner of that code (test/support/usage-log.ts) must give exactly the
 * tables that applying its events one at a time gives, and a rebuild must give them again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { ReadModelTables } from '../../src/adapters/sql/schema.js';
import { billingProjection } from '../../src/projections/billing/projection.js';
import { keyUsageProjection } from '../../src/projections/key-usage.js';
import type { Projection } from '../../src/projections/runtime/projection.js';
import { ProjectionRunner } from '../../src/projections/runtime/runner.js';
import { usageProjection } from '../../src/projections/usage.js';
import { dialectsHere, freshDatabase } from '../support/databases.js';
import { appendVariedUsageLog } from '../support/usage-log.js';

const logger = pino({ level: 'silent' });
const services = inject('services');
const urls = inject('serviceUrls');

/** The same projection without its batch path: the runner applies its events one at a time. */
const oneByOne = ({ name, version, eventTypes, apply, reset }: Projection): Projection => ({ name, version, eventTypes, apply, reset });

/** Every table of the three projections, rows in key order, values as text (as the audit compares them). */
const TABLES: Array<[keyof ReadModelTables, string[]]> = [
  ['usage_requests', ['event_position', 'event_version']],
  ['usage_hourly', ['tenant_id', 'hour', 'user_id', 'key_id', 'channel_id', 'model']],
  ['usage_daily', ['tenant_id', 'day', 'user_id', 'key_id', 'channel_id', 'model']],
  ['billing_requests', ['event_position', 'event_version']],
  ['billing_ledger', ['event_position', 'event_version', 'id']],
  ['billing_balances', ['user_id']],
  ['billing_subscriptions', ['user_id']],
  ['billing_key_spend', ['key_id']],
  ['billing_prices', ['tenant_id', 'model']],
  ['billing_settings', ['tenant_id']],
  ['key_usage', ['key_id']],
];

async function dump(db: Kysely<ReadModelTables>): Promise<Record<string, Array<Record<string, string | null>>>> {
  const out: Record<string, Array<Record<string, string | null>>> = {};
  for (const [table, key] of TABLES) {
    let query = db.selectFrom(table).selectAll();
    for (const column of key) query = query.orderBy(column as never);
    const rows = (await query.execute()) as Array<Record<string, unknown>>;
    out[table] = rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)])));
  }
  return out;
}

describe.each(dialectsHere(services))('usage batches on %s', (dialect, available) => {
  let dir: string;
  let store: SqliteEventStore;
  const cleanups: Array<() => Promise<void>> = [];

  beforeEach(async (ctx) => {
    if (!available) ctx.skip();
    dir = mkdtempSync(join(tmpdir(), 'sy-usage-batches-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
  });
  afterEach(async () => {
    if (!available) return;
    await store.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function project(projections: Projection[], head: number) {
    const { sql, cleanup } = await freshDatabase(dialect, urls);
    cleanups.push(cleanup);
    const runner = new ProjectionRunner(store, sql.db, projections, logger);
    await runner.start();
    await runner.waitFor(head, { timeoutMs: 60_000 });
    return { runner, db: sql.db };
  }

  it('give the tables of applying the events one by one, and a rebuild gives them again', async () => {
    const head = await appendVariedUsageLog(store);
    const batched = await project([usageProjection, billingProjection, keyUsageProjection], head);
    const single = await project([usageProjection, billingProjection, keyUsageProjection].map(oneByOne), head);
    const tables = await dump(batched.db);

    // The log's corners show up: clipped and reused ids, charges, covered requests, key spend.
    expect(tables.usage_requests!.length).toBeGreaterThan(400);
    expect(tables.usage_requests!.some((r) => r.request_key!.endsWith('~2'))).toBe(true);
    expect(tables.usage_requests!.some((r) => r.request_key!.length > 128 && r.request_key!.endsWith('~1'))).toBe(true);
    expect(tables.billing_ledger!.filter((r) => r.entry_type === 'charge').length).toBeGreaterThan(100);
    expect(new Set(tables.billing_requests!.map((r) => r.coverage))).toEqual(new Set(['none', 'full', 'partial']));
    expect(tables.billing_key_spend!.length).toBeGreaterThan(0);

    expect(await dump(single.db)).toEqual(tables);
    for (const name of ['usage', 'billing', 'key_usage']) await batched.runner.rebuild(name);
    expect(await dump(batched.db)).toEqual(tables);
    await batched.runner.stop();
    await single.runner.stop();
  });
});

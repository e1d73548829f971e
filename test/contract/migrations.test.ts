/**
 * Schema migrations on every read-model database that runs here: the latest step
 * (0050_request_rows_in_log_order) keys the per-request tables by log position, and steps down
 * to the request-id keys and up again.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import { migrateDownTo, migrateToLatest } from '../../src/adapters/sql/migrate.js';
import { freshDatabase, dialectsHere } from '../support/databases.js';

const services = inject('services');
const urls = inject('serviceUrls');
const dialects = dialectsHere(services);

/** A `billing_requests` row: small enough to write by hand. */
const billingRow = (dedupeKey: string, position: number) => ({
  dedupe_key: dedupeKey,
  request_id: dedupeKey,
  fingerprint: 'f',
  tenant_id: 't',
  user_id: 'u',
  key_id: null,
  model: 'm',
  prompt_tokens: 1,
  completion_tokens: 1,
  input_per_1m_micro: 0,
  output_per_1m_micro: 0,
  per_request_micro: 0,
  cost_micro: 0,
  charged_micro: 0,
  coverage: 'none',
  event_id: `e-${position}`,
  event_position: position,
  event_version: 1,
  created_at: '2026-11-21T00:00:00.000Z',
});

describe.each(dialects)('migrations on %s', (dialect, enabled) => {
  let db: { sql: SqlDatabase; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await db?.cleanup();
    db = undefined;
  });

  it.skipIf(!enabled)('keys billing_requests by log position, steps down to the request-id key and up again', async () => {
    db = await freshDatabase(dialect, urls);
    const k = db.sql.db;
    const insert = (dedupeKey: string, position: number) => k.insertInto('billing_requests').values(billingRow(dedupeKey, position)).execute();
    const count = async () => Number((await sql<{ n: number }>`SELECT count(*) AS n FROM billing_requests`.execute(k)).rows[0]!.n);

    // Latest: the log position is the key; the request id is not unique by itself.
    await insert('req-1', 1);
    await insert('req-1', 2);
    await expect(insert('req-2', 2)).rejects.toThrow();
    expect(await count()).toBe(2);

    // One step down: the request id (dedupe key) is the key again, the table starts empty.
    // Down to the step before 0050 (later steps, which do not touch these tables, go down too).
    expect(await migrateDownTo(k, '0040_usage')).toContain('0050_request_rows_in_log_order');
    expect(await count()).toBe(0);
    await insert('req-1', 1);
    await expect(insert('req-1', 2)).rejects.toThrow();

    // And up again.
    expect(await migrateToLatest(k)).toContain('0050_request_rows_in_log_order');
    await insert('req-1', 1);
    await insert('req-1', 2);
    expect(await count()).toBe(2);
  });

  it.skipIf(!enabled)('0060 adds projection_quarantine, one row per projection and event, and steps down', async () => {
    db = await freshDatabase(dialect, urls);
    const k = db.sql.db;
    const row = (projection: string) => ({
      projection,
      event_position: 7,
      event_version: 3,
      event_id: 'e-7',
      stream: 'usage-t',
      event_type: 'UsageRecorded',
      tenant_id: 't',
      occurred_at: '2026-11-21T00:00:00.000Z',
      error: 'boom',
      quarantined_at: '2026-11-21T00:00:01.000Z',
      replayed_at: null,
    });
    await k.insertInto('projection_quarantine').values(row('billing')).execute();
    await k.insertInto('projection_quarantine').values(row('usage')).execute();
    await expect(k.insertInto('projection_quarantine').values(row('billing')).execute()).rejects.toThrow();
    expect(await migrateDownTo(k, '0050_request_rows_in_log_order')).toContain('0060_projection_quarantine');
    await expect(k.selectFrom('projection_quarantine').selectAll().execute()).rejects.toThrow();
    expect(await migrateToLatest(k)).toContain('0060_projection_quarantine');
    expect(await k.selectFrom('projection_quarantine').selectAll().execute()).toEqual([]);
  });
});

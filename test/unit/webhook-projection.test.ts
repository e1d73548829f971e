/**
 * The webhooks projection under the real runner, on a SQLite log and read model: ordinary usage
 * events never reach it (Projection.accepts), a quota refusal does; a rebuild keeps the
 * deliveries as they were and makes or queues none again (a replayed redelivery included); events after the rebuild make deliveries as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite.js';
import type { SqlDatabase } from '../../src/adapters/sql/database.js';
import type { StoredEvent } from '../../src/ports/event-store.js';
import type { Projection } from '../../src/projections/runtime/projection.js';
import { ProjectionRunner } from '../../src/projections/runtime/runner.js';
import { webhooksProjection } from '../../src/projections/webhooks.js';
import { freshDatabase } from '../support/databases.js';

const urls = { mysql: '', postgres: '' };

function usage(i: number, errorCode: string | null) {
  return { type: 'UsageRecorded', data: { request_id: `r${i}`, tenant_id: 't1', user_id: 'u1', key_id: 'k1', model_requested: 'm', status: errorCode ? 429 : 200, error_code: errorCode } };
}

describe('webhooks projection under the runner (SQLite)', () => {
  let dir: string;
  let store: SqliteEventStore;
  let sql: SqlDatabase;
  let cleanup: () => Promise<void>;
  let runner: ProjectionRunner;
  /** What the runner handed the projection, in order. */
  let seen: StoredEvent[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-webhooks-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db'), pollIntervalMs: 20 });
    ({ sql, cleanup } = await freshDatabase('sqlite', urls));
    seen = [];
    // The real projection; the wrapper only records what reaches it.
    const observed: Projection = {
      ...webhooksProjection,
      apply: (trx, event) => {
        seen.push(event);
        return webhooksProjection.apply(trx, event);
      },
      applyCommit: (trx, events) => {
        seen.push(...events);
        return webhooksProjection.applyCommit!(trx, events);
      },
    };
    runner = new ProjectionRunner(store, sql.db, [observed], pino({ level: 'silent' }), { retryDelayMs: 20 });
    await runner.start();
  });

  afterEach(async () => {
    await runner.stop();
    await store.close();
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const deliveryRows = () => sql.db.selectFrom('webhook_deliveries').select(['id', 'event_type', 'status', 'attempts', 'payload']).orderBy('event_position').execute();

  it('reads only quota refusals among usage events, and a rebuild sends nothing again', async () => {
    await store.append('webhook-wh1', [{ type: 'WebhookCreated', data: { webhook_id: 'wh1', url: 'https://example.com/h', events: ['quota.exhausted', 'user.created'], secret_sealed: 'v1.x', enabled: true, by: null } }], { expectedVersion: 0, tenantId: 't1' });
    for (let i = 0; i < 30; i++) await store.append('usage-a', [usage(i, null), usage(i + 1000, 'upstream_error')], { expectedVersion: 'any', tenantId: 't1' });
    await store.append('usage-a', [usage(50, null), usage(51, 'insufficient_quota'), usage(52, null)], { expectedVersion: 'any', tenantId: 't1' });
    await runner.waitFor(await store.headPosition());
    expect(seen.map((e) => `${e.type}:${String(e.data.error_code ?? '')}`)).toEqual(['WebhookCreated:', 'UsageRecorded:insufficient_quota']);
    expect((await deliveryRows()).map((r) => r.event_type)).toEqual(['quota.exhausted']);

    // As if sent: a rebuild must leave it so, and not make it again.
    await sql.db.updateTable('webhook_deliveries').set({ status: 'delivered', attempts: 1 }).execute();
    const before = await deliveryRows();
    await store.append('user-u2', [{ type: 'UserCreated', data: { user_id: 'u2', email: 'u2@x.test', password_hash: 'h', role: 'user' } }], { expectedVersion: 0, tenantId: 't1' });
    await runner.waitFor(await store.headPosition());
    expect((await deliveryRows()).map((r) => r.event_type)).toEqual(['quota.exhausted', 'user.created']);
    // A redelivery asked and made: replayed, it must not queue the delivery again.
    const quotaDelivery = (await deliveryRows())[0]!.id;
    await store.append('webhook-wh1', [{ type: 'WebhookRedeliveryRequested', data: { delivery_id: quotaDelivery, by: null } }], { expectedVersion: 1, tenantId: 't1' });
    await runner.waitFor(await store.headPosition());
    expect((await deliveryRows())[0]).toMatchObject({ id: quotaDelivery, status: 'pending' });
    await sql.db.updateTable('webhook_deliveries').set({ status: 'delivered', attempts: 1 }).execute();
    const sent = await deliveryRows();

    await runner.rebuild('webhooks');
    expect(await deliveryRows()).toEqual(sent);
    expect(await sql.db.selectFrom('webhooks').select('id').execute()).toEqual([{ id: 'wh1' }]);
    expect(before).toHaveLength(1);

    // After the rebuild, new events make deliveries as before.
    await store.append('user-u3', [{ type: 'UserCreated', data: { user_id: 'u3', email: 'u3@x.test', password_hash: 'h', role: 'user' } }], { expectedVersion: 0, tenantId: 't1' });
    await runner.waitFor(await store.headPosition());
    const after = await deliveryRows();
    expect(after.map((r) => `${r.event_type}:${r.status}`)).toEqual(['quota.exhausted:delivered', 'user.created:delivered', 'user.created:pending']);
    expect(after[2]!.payload).not.toContain('password_hash');
  });
});

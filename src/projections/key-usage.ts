/**
 * Per-key usage totals (`key_usage`) from the relay's usage events. Quota counters live in the
 * counters port (memory or Redis, neither kept on disk here), so at startup they are re-seeded
 * from what each key has spent (billing_key_spend, kept by the billing projection at the tenant's
 * prices): a restart never hands a key its quota back.
 */
import { preparedStatement } from '../adapters/sql/compiled.js';
import { USAGE_RECORDED } from '../commands/usage/events.js';
import type { Counters } from '../ports/counters.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';
import { requireUsageEvent } from './usage-events.js';

/** Adds a commit's usage to a key's row (compiled once: it runs for every key of every commit). */
const addKeyUsage = preparedStatement('key_usage.add', ['key_id', 'requests', 'total_tokens', 'updated_at'], (db: ReadModelDb, p) =>
  db
    .updateTable('key_usage')
    .set((eb) => ({ requests: eb('requests', '+', p('requests')), total_tokens: eb('total_tokens', '+', p('total_tokens')), updated_at: p('updated_at') }))
    .where('key_id', '=', p('key_id')),
);

/** One commit's usage per key: one update (or insert) per key touched, same rows as event by event. */
async function applyKeyUsage(trx: ReadModelDb, events: readonly StoredEvent[]): Promise<void> {
  const deltas = new Map<string, { tenantId: string; requests: number; totalTokens: number; at: string }>();
  for (const stored of events) {
    const { usage } = requireUsageEvent(stored);
    if (!usage.key_id) continue;
    const delta = deltas.get(usage.key_id);
    if (delta) {
      delta.requests += 1;
      delta.totalTokens += usage.total_tokens;
      delta.at = stored.occurred_at;
    } else {
      deltas.set(usage.key_id, { tenantId: usage.tenant_id, requests: 1, totalTokens: usage.total_tokens, at: stored.occurred_at });
    }
  }
  for (const [keyId, delta] of deltas) {
    const updated = await addKeyUsage(trx, { key_id: keyId, requests: delta.requests, total_tokens: delta.totalTokens, updated_at: delta.at });
    if (Number(updated.numAffectedRows) === 0) {
      await trx.insertInto('key_usage').values({ key_id: keyId, tenant_id: delta.tenantId, requests: delta.requests, total_tokens: delta.totalTokens, updated_at: delta.at }).execute();
    }
  }
}

export const keyUsageProjection: Projection = {
  name: 'key_usage',
  version: 1,
  eventTypes: [USAGE_RECORDED],
  apply(trx, stored) {
    return applyKeyUsage(trx, [stored]);
  },
  applyCommit(trx, events) {
    return applyKeyUsage(trx, events);
  },
  async reset(trx) {
    await trx.deleteFrom('key_usage').execute();
  },
};

/**
 * Puts each key's used quota back into an empty counter (a fresh Redis or a restarted process):
 * what the key has spent at the tenant's prices, from the billing projection (billing_key_spend).
 */
export async function seedQuotaCounters(db: ReadModelDb, counters: Counters): Promise<number> {
  const rows = await db.selectFrom('billing_key_spend').select(['key_id', 'spent_micro']).execute();
  let seeded = 0;
  for (const row of rows) {
    const key = `quota:${row.key_id}`;
    if ((await counters.get(key)) !== 0) continue; // live (another instance is using it)
    await counters.set(key, Number(row.spent_micro));
    seeded++;
  }
  return seeded;
}

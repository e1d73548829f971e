/**
 * Per-key usage totals (`key_usage`) from the relay's usage events. Quota counters live in the
 * counters port (memory or Redis, neither kept on disk here), so at startup they are re-seeded
 * from what each key has spent (billing_key_spend, kept by the billing projection at the tenant's
 * prices): a restart never hands a key its quota back.
 */
import { USAGE_RECORDED, UsageData } from '../commands/usage/events.js';
import type { Counters } from '../ports/counters.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

export const keyUsageProjection: Projection = {
  name: 'key_usage',
  version: 1,
  eventTypes: [USAGE_RECORDED],
  async apply(trx, stored) {
    const usage = UsageData.parse(stored.data);
    if (!usage.key_id) return;
    const updated = await trx
      .updateTable('key_usage')
      .set((eb) => ({ requests: eb('requests', '+', 1), total_tokens: eb('total_tokens', '+', usage.total_tokens), updated_at: stored.occurred_at }))
      .where('key_id', '=', usage.key_id)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      await trx.insertInto('key_usage').values({ key_id: usage.key_id, tenant_id: usage.tenant_id, requests: 1, total_tokens: usage.total_tokens, updated_at: stored.occurred_at }).execute();
    }
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

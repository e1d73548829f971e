/**
 * Quota counters live in the counters port (memory or Redis, neither kept on disk here), so at
 * startup they are re-seeded from what each key has spent (billing_key_spend, kept by the billing
 * projection at the tenant's prices): a restart never hands a key its quota back.
 */
import type { Counters } from '../ports/counters.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

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

/**
 * Per-key usage totals (`key_usage`) from the relay's usage events. Quota counters live in the
 * counters port (memory or Redis, neither kept on disk here), so at startup they are re-seeded
 * from this read model: a restart never hands a key its quota back.
 */
import { USAGE_RECORDED, UsageData } from '../commands/usage/events.js';
import type { Counters } from '../ports/counters.js';
import { costOfTokens } from '../relay/access/quota-cost.js';
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

/** Puts each key's used quota back into an empty counter (a fresh Redis or a restarted process). */
export async function seedQuotaCounters(db: ReadModelDb, counters: Counters): Promise<number> {
  const rows = await db.selectFrom('key_usage').select(['key_id', 'total_tokens']).execute();
  let seeded = 0;
  for (const row of rows) {
    const key = `quota:${row.key_id}`;
    if ((await counters.get(key)) !== 0) continue; // live (another instance is using it)
    await counters.set(key, costOfTokens(Number(row.total_tokens)));
    seeded++;
  }
  return seeded;
}

/** Per-key usage totals (`key_usage`) from the relay's usage events. */
import { preparedStatement } from '../adapters/sql/compiled.js';
import { USAGE_RECORDED } from '../commands/usage/events.js';
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

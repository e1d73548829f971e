/** Reads of the API keys read model (src/projections/keys.ts). */
import { MICRO_PER_CREDIT } from '../billing/money.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export async function loadKeyRows(db: ReadModelDb, tenantId: string, userId?: string) {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId);
  if (userId) query = query.where('user_id', '=', userId);
  return query.orderBy('created_at').execute();
}

export interface KeyUsage {
  /** Credits spent (billing_key_spend: what quota_limit counts). */
  quota_used: number;
  /** Start of its latest request still in usage_requests; null if none. */
  last_used_at: string | null;
}

/** Spend and latest request of each key in `ids` (every id answered; two grouped reads). */
export async function loadKeyUsage(db: ReadModelDb, tenantId: string, ids: string[]): Promise<Map<string, KeyUsage>> {
  const usage = new Map<string, KeyUsage>(ids.map((id) => [id, { quota_used: 0, last_used_at: null }]));
  if (ids.length === 0) return usage;
  const [spend, last] = await Promise.all([
    db.selectFrom('billing_key_spend').select(['key_id', 'spent_micro']).where('tenant_id', '=', tenantId).where('key_id', 'in', ids).execute(),
    db.selectFrom('usage_requests').select(['key_id', (eb) => eb.fn.max('started_at').as('last')]).where('tenant_id', '=', tenantId).where('key_id', 'in', ids).groupBy('key_id').execute(),
  ]);
  for (const row of spend) usage.get(row.key_id)!.quota_used = Number(row.spent_micro) / MICRO_PER_CREDIT;
  for (const row of last) if (row.key_id !== null && row.last !== null) usage.get(row.key_id)!.last_used_at = String(row.last);
  return usage;
}

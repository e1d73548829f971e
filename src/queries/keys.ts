/** Reads of the API keys read model (src/projections/keys.ts). */
import type { ReadModelDb } from '../projections/runtime/projection.js';

export async function loadKeyRows(db: ReadModelDb, tenantId: string, userId?: string) {
  let query = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId);
  if (userId) query = query.where('user_id', '=', userId);
  return query.orderBy('created_at').execute();
}

/** Reads of the channels read model (src/projections/channels.ts). */
import type { ChannelsTable } from '../adapters/sql/schema.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';

export async function loadChannelRows(db: ReadModelDb, tenantId?: string): Promise<ChannelsTable[]> {
  let query = db.selectFrom('channels').selectAll();
  if (tenantId) query = query.where('tenant_id', '=', tenantId);
  return query.orderBy('priority').orderBy('created_at').execute();
}

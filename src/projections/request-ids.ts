/**
 * The per-request tables' de-duplication read (usage_requests, billing_requests): for the request
 * ids of a batch of usage events, the fingerprints of the rows already stored under each, read
 * with padded IN lists (selectWhereIn: a few statement texts, compiled once).
 */
import { selectWhereIn } from '../adapters/sql/compiled.js';
import type { ReadModelDb } from './runtime/projection.js';

export type RequestIdTable = 'usage_requests' | 'billing_requests';

/** Reads `request id -> fingerprints already stored` for `requestIds` (distinct; in any order). */
export function idLookup(table: RequestIdTable): (db: ReadModelDb, requestIds: readonly string[]) => Promise<Map<string, string[]>> {
  return async (db, requestIds) => {
    const seen = new Map<string, string[]>();
    const rows = await selectWhereIn<{ request_id: string; fingerprint: string }>(db, `${table}.fingerprints`, requestIds, (ids) =>
      db.selectFrom(table).select(['request_id', 'fingerprint']).where('request_id', 'in', ids as string[]),
    );
    for (const row of rows) {
      const list = seen.get(row.request_id);
      if (list) list.push(row.fingerprint);
      else seen.set(row.request_id, [row.fingerprint]);
    }
    return seen;
  };
}

/**
 * The per-request tables' de-duplication read (usage_requests, billing_requests): for the request
 * ids of a batch of usage events, the fingerprints of the rows already stored under each. One
 * SELECT per 128 ids, its IN list padded to a fixed length (repeating an id changes nothing), so
 * that every batch size runs one of two statement texts, compiled once.
 */
import { executeCompiled } from '../adapters/sql/compiled.js';
import type { ReadModelDb } from './runtime/projection.js';

const SIZES = [16, 128];
const MAX = 128;

export type RequestIdTable = 'usage_requests' | 'billing_requests';

/** Reads `request id -> fingerprints already stored` for `requestIds` (distinct; in any order). */
export function idLookup(table: RequestIdTable): (db: ReadModelDb, requestIds: readonly string[]) => Promise<Map<string, string[]>> {
  return async (db, requestIds) => {
    const seen = new Map<string, string[]>();
    for (let start = 0; start < requestIds.length; start += MAX) {
      const part = requestIds.slice(start, start + MAX);
      const size = SIZES.find((s) => s >= part.length)!;
      const ids = part.concat(new Array<string>(size - part.length).fill(part[0]!));
      const result = await executeCompiled(db, `${table}.fingerprints x${size}`, ids, () => db.selectFrom(table).select(['request_id', 'fingerprint']).where('request_id', 'in', ids));
      for (const row of result.rows as Array<{ request_id: string; fingerprint: string }>) {
        const list = seen.get(row.request_id);
        if (list) list.push(row.fingerprint);
        else seen.set(row.request_id, [row.fingerprint]);
      }
    }
    return seen;
  };
}

/**
 * The `logs` projection: log entries derived from domain events (src/logs/of-events.ts) in the
 * searchable index (`log_entries`, migration 0170), `source` = 'event'. Process entries share the
 * table (written by each instance's LogIndexBatcher) and survive a rebuild: reset deletes only
 * this projection's rows, and the replay writes the same ids again.
 *
 * It reads every usage event, but few produce an entry (errors, slow requests): a commit's events
 * are turned into entries in memory and only those are written, in one multi-row insert.
 */
import { insertLogRows, rowOf } from '../logs/index/sql-index.js';
import { entriesOfEvent, LOGGED_EVENT_TYPES, type EntriesOfEventOptions } from '../logs/of-events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

async function write(trx: ReadModelDb, events: readonly StoredEvent[], options: EntriesOfEventOptions): Promise<void> {
  const rows: ReturnType<typeof rowOf>[] = [];
  for (const event of events) for (const entry of entriesOfEvent(event, options)) rows.push(rowOf(entry, 'event'));
  if (rows.length > 0) await insertLogRows(trx, rows);
}

export function logsProjection(options: EntriesOfEventOptions = {}): Projection {
  return {
    name: 'logs',
    version: 2, // 2: MfaSecretResealed entries
    eventTypes: LOGGED_EVENT_TYPES,
    apply: (trx, event) => write(trx, [event], options),
    applyCommit: (trx, events) => write(trx, events, options),
    async reset(trx) {
      await trx.deleteFrom('log_entries').where('source', '=', 'event').execute();
    },
  };
}

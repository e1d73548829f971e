/**
 * Writes of the log index (table `log_entries`, migration 0170): entries as rows, inserted with
 * duplicates ignored (an entry's id is unique: retried batches and replayed events store once),
 * and retention.
 */
import { PostgresAdapter, type Kysely } from 'kysely';
import type { LogEntriesTable, ReadModelTables } from '../../adapters/sql/schema.js';
import { levelRank, type LogEntry, type LogIndexWriter } from '../entry.js';

type Db = Kysely<ReadModelTables>;
export type LogSource = 'process' | 'event';
type NewRow = Omit<LogEntriesTable, 'seq'>;

/** Rows per INSERT: well under every driver's parameter limit (16 columns each). */
const ROWS_PER_INSERT = 200;

export function rowOf(entry: LogEntry, source: LogSource): NewRow {
  return {
    id: entry.id,
    timestamp: entry.timestamp,
    level: entry.level,
    level_rank: levelRank(entry.level),
    category: entry.category,
    component: entry.component,
    event: entry.event,
    user_id: entry.user_id ?? null,
    session_id: entry.session_id ?? null,
    tenant_id: entry.tenant_id ?? null,
    request_id: entry.request_id ?? null,
    ip_address: entry.ip_address ?? null,
    message: entry.message,
    details: JSON.stringify(entry.details),
    instance: entry.instance ?? null,
    source,
  };
}

/** INSERT, an already stored id ignored, in chunks (through `db`: a connection or a transaction). */
export async function insertLogRows(db: Db, rows: readonly NewRow[]): Promise<void> {
  const adapter = db.getExecutor().adapter;
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + ROWS_PER_INSERT);
    const insert = db.insertInto('log_entries').values(chunk);
    // `insert ignore` (MySQL) / `insert or ignore` (SQLite); PostgreSQL names the conflict.
    if (adapter instanceof PostgresAdapter) await insert.onConflict((oc) => oc.column('id').doNothing()).execute();
    else await insert.orIgnore().execute();
  }
}

/** The LogIndexWriter of the read-model database (process entries; the projection writes its own). */
export class SqlLogIndex implements LogIndexWriter {
  constructor(private readonly db: Db) {}

  async append(entries: readonly LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await insertLogRows(
      this.db,
      entries.map((e) => rowOf(e, 'process')),
    );
  }
}

/** Retention of searchable entries, in days per category, and for DEBUG entries of any category. */
export type LogRetentionDays = Readonly<Record<'system' | 'application' | 'user_activity' | 'security' | 'performance' | 'debug', number>>;

const CATEGORIES = ['system', 'application', 'user_activity', 'security', 'performance'] as const;

/**
 * Deletes entries past their category's retention and DEBUG entries past the debug retention, as of
 * `now`. Idempotent (every instance may run it). Returns how many rows went.
 */
export async function pruneLogIndex(db: Db, retentionDays: LogRetentionDays, now: Date): Promise<number> {
  const before = (days: number) => new Date(now.getTime() - days * 86_400_000).toISOString();
  let removed = 0;
  for (const category of CATEGORIES) {
    const result = await db.deleteFrom('log_entries').where('category', '=', category).where('timestamp', '<', before(retentionDays[category])).executeTakeFirst();
    removed += Number(result.numDeletedRows);
  }
  const debug = await db.deleteFrom('log_entries').where('level_rank', '=', levelRank('DEBUG')).where('timestamp', '<', before(retentionDays.debug)).executeTakeFirst();
  return removed + Number(debug.numDeletedRows);
}

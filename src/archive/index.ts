/**
 * Archival as the CLI and the periodic run use it: archive, then drop the live-view snapshots the
 * archive made stale (a view started from one would replay a tail with the archived events gone).
 */
import type { SqlDatabase } from '../adapters/sql/database.js';
import type { EventStore } from '../ports/event-store.js';
import { archiveUsage, type ArchiveResult } from './usage-archive.js';

export { readArchivedCommits, verifyArchive, withArchive } from './usage-archive.js';

const DAY_MS = 86_400_000;

/** The cutoff of an age policy in days (null: the policy is off). */
export function archiveBefore(afterDays: number, now: Date): Date | null {
  return afterDays > 0 ? new Date(now.getTime() - afterDays * DAY_MS) : null;
}

export async function archiveUsageNow(store: EventStore, sql: SqlDatabase, dir: string, before: Date): Promise<ArchiveResult> {
  const result = await archiveUsage(store, dir, before);
  if (result.upTo > 0) await dropStaleSnapshots(sql, result.upTo);
  return result;
}

/** A live view started from a snapshot below the archive's end would follow a log with holes. */
async function dropStaleSnapshots(sql: SqlDatabase, upTo: number): Promise<void> {
  await sql.db.deleteFrom('live_view_snapshots').where('position', '<', upTo).execute();
}

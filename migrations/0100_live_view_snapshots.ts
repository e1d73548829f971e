/**
 * `live_view_snapshots`: a live view's in-memory state at a log position, written every
 * LIVE_VIEW_SNAPSHOT_EVERY events it folds and when it stops, so that a start replays only the
 * log after it (src/projections/runtime/live-view.ts). One row per view (and, distributed, per
 * installation: every instance folds the same log, so any instance's snapshot serves all).
 */
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const large = db.getExecutor().adapter instanceof MysqlAdapter ? sql`longtext` : sql`text`;
  await db.schema
    .createTable('live_view_snapshots')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    /** The view's snapshot format and its projection's version; any other is ignored. */
    .addColumn('schema_version', 'varchar(40)', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    /** The state, serialised (base64 of the V8 serialisation). */
    .addColumn('state', large, (c) => c.notNull())
    /** sha256 of `state`: a damaged row is ignored. */
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('written_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('live_view_snapshots').execute();
}

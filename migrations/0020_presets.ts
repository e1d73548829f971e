/**
 * Presets read model: one row per preset, user presets and built-ins alike. Deleted presets stay
 * as tombstones (`deleted` = 1) so that devices syncing from a cursor learn of the deletion.
 * `position` is the log position of the row's last change (the sync cursor), `search_text` the
 * lower-cased text searched (name, description, tags, system prompt, context).
 */
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A preset holds up to 100,000 characters of context (300 KB and more in UTF-8): beyond MySQL's
  // TEXT (64 KB), so MEDIUMTEXT there; SQLite's and PostgreSQL's text have no such limit.
  const large = db.getExecutor().adapter instanceof MysqlAdapter ? sql`mediumtext` : sql`text`;
  await db.schema
    .createTable('presets')
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('owner_id', 'varchar(64)')
    .addColumn('builtin', 'integer', (c) => c.notNull())
    .addColumn('visibility', 'varchar(16)', (c) => c.notNull())
    .addColumn('category', 'varchar(40)')
    .addColumn('lang', 'varchar(16)')
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('tags_text', 'text', (c) => c.notNull())
    .addColumn('search_text', large, (c) => c.notNull())
    .addColumn('data', large, (c) => c.notNull())
    .addColumn('version', 'varchar(40)')
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('cloned_from', 'varchar(128)')
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('created_position', 'bigint', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('presets_by_owner').on('presets').columns(['owner_id', 'position']).execute();
  await db.schema.createIndex('presets_by_tenant').on('presets').columns(['tenant_id', 'visibility']).execute();
  await db.schema.createIndex('presets_by_visibility').on('presets').columns(['visibility', 'deleted']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('presets').execute();
}

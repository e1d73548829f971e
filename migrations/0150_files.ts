/**
 * Files read model (src/projections/files.ts, issue 18), and the tenant's storage quota.
 *
 * `files`: one row per uploaded file, its name in the clear (opened from the sealed event with the
 * file's data key; NULL once the key is destroyed), its type, size, content hash, where its bytes
 * and extracted text are in storage, and its processing status. A deleted file keeps a tombstone
 * row (`deleted` = 1, no name). Ids are time-ordered (`file-` + the hex of a version 7 UUID), so
 * the id orders a user's list and is its cursor.
 *
 * `billing_settings.storage_quota_bytes`: the tenant's storage quota (NULL: unlimited, the default
 * and what every existing tenant had), so no projection needs a rebuild.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('files')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('purpose', 'varchar(64)', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
    .addColumn('mime_type', 'varchar(128)', (c) => c.notNull())
    .addColumn('storage_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('status_code', 'varchar(64)')
    .addColumn('status_reason', 'text')
    .addColumn('processing_started_at', 'varchar(40)')
    .addColumn('text_key', 'varchar(255)')
    .addColumn('text_chars', 'bigint')
    .addColumn('truncated', 'integer', (c) => c.notNull())
    .addColumn('pages', 'integer')
    .addColumn('ocr_pages', 'integer')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('processed_at', 'varchar(40)')
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(40)')
    .execute();
  // A user's list (newest or oldest first by id) and the quota's sum per tenant.
  await db.schema.createIndex('files_by_owner').on('files').columns(['tenant_id', 'user_id', 'deleted', 'id']).execute();
  await db.schema.createIndex('files_by_tenant').on('files').columns(['tenant_id', 'deleted']).execute();
  // Startup's look for files a dead instance left waiting or half-processed.
  await db.schema.createIndex('files_by_status').on('files').columns(['status', 'deleted']).execute();

  await db.schema.alterTable('billing_settings').addColumn('storage_quota_bytes', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('billing_settings').dropColumn('storage_quota_bytes').execute();
  await db.schema.dropTable('files').execute();
}

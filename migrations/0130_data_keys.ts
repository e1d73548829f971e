/**
 * Data keys (crypto-shredding, src/ports/data-keys.ts): one row per scope, the key sealed with
 * SECRET. NOT a projection's table: nothing in the log can rebuild it, and no rebuild drops it. A
 * destroyed key leaves a tombstone (`sealed_key` NULL, `destroyed_at` set) so it is never re-made.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('data_keys')
    .addColumn('scope', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('sealed_key', 'varchar(255)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('destroyed_at', 'varchar(40)')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('data_keys').execute();
}

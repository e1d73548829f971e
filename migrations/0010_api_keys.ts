/** API keys read model: one row per key (revoked keys stay, marked). The secret is only hashed. */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('revoked', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('revoked_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('api_keys_by_tenant_user').on('api_keys').columns(['tenant_id', 'user_id']).execute();

  // What each key has used (from usage events): re-seeds quota counters after a restart.
  await db.schema
    .createTable('key_usage')
    .addColumn('key_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('total_tokens', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('key_usage').execute();
  await db.schema.dropTable('api_keys').execute();
}

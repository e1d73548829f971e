/** Channels read model: one row per live channel (deleted channels are removed). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channels')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(100)', (c) => c.notNull())
    .addColumn('type', 'varchar(32)', (c) => c.notNull())
    .addColumn('base_url', 'text')
    .addColumn('key_sealed', 'text', (c) => c.notNull())
    .addColumn('key_masked', 'varchar(64)', (c) => c.notNull())
    .addColumn('models', 'text', (c) => c.notNull())
    .addColumn('model_mapping', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addColumn('weight', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('healthy', 'integer', (c) => c.notNull())
    .addColumn('cooldown_until', 'varchar(40)')
    .addColumn('health_reason', 'text')
    .addColumn('last_test_ok', 'integer')
    .addColumn('last_test_status', 'integer')
    .addColumn('last_test_latency_ms', 'integer')
    .addColumn('last_test_error', 'text')
    .addColumn('last_tested_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('channels_by_tenant').on('channels').columns(['tenant_id', 'priority']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('channels').execute();
}

/**
 * Spine tables: projection checkpoints and the maintenance-mode read model.
 * Portable across SQLite, MySQL/MariaDB and PostgreSQL (see src/adapters/sql/schema.ts rules).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('projection_checkpoints')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('maintenance_state')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('changed_by', 'varchar(191)')
    .addColumn('changed_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('maintenance_state').execute();
  await db.schema.dropTable('projection_checkpoints').execute();
}

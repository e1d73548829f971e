/**
 * Stored responses (the Responses API's `store`), one row per response (src/projections/responses.ts).
 * The content (input, output, instructions, the rest of the response object) is JSON text; a
 * deleted response keeps its row (`deleted` = 1) with the content emptied.
 */
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Inputs may carry images as data: URLs: beyond MySQL's TEXT (64 KB) and MEDIUMTEXT (16 MB).
  const large = db.getExecutor().adapter instanceof MysqlAdapter ? sql`longtext` : sql`text`;
  await db.schema
    .createTable('responses')
    .addColumn('id', 'varchar(128)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('owner_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)')
    .addColumn('key_id', 'varchar(64)')
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('previous_response_id', 'varchar(128)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('instructions', large)
    .addColumn('input', large, (c) => c.notNull())
    .addColumn('output', large, (c) => c.notNull())
    .addColumn('usage', 'text')
    .addColumn('details', large, (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('stored_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('deleted_at', 'varchar(40)')
    .execute();
  await db.schema.createIndex('responses_by_owner').on('responses').columns(['tenant_id', 'owner_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('responses').execute();
}

/**
 * Issue 21: a webhook's payload format (`api_version`, docs/api-versions.md): `v2` (current) or
 * `v1` (the 1.x format). Webhooks made before this column keep the v2 payloads they had.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('api_version', 'varchar(8)', (c) => c.notNull().defaultTo(sql`'v2'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('api_version').execute();
}

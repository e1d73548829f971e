/**
 * Webhooks read model and delivery outbox (src/projections/webhooks.ts, issue 19).
 *
 * `webhooks`: one row per live webhook (deleted ones leave), its secret as sealed in the event.
 *
 * `webhook_deliveries`: one row per (webhook, notice), written by the projection when an event
 * matches a webhook and worked by the dispatcher (src/webhooks/dispatcher.ts) on every instance:
 * `pending` rows are due at `next_attempt_at` (ISO text; compared as text, all written by
 * toISOString), claimed by a conditional UPDATE, then `delivered` or retried until `failed`. The
 * id is a hash of the webhook id and the notice's key, so it is the (webhook, event) uniqueness:
 * a replayed event finds its row instead of making a second one. `event_position` (log position of
 * the notice's event) orders a webhook's list and is its cursor, with the id.
 *
 * `webhook_outbox`: the highest log position the projection has made deliveries for. A rebuild
 * keeps it (and the deliveries): a replay of events at or below it sends nothing again.
 */
import { MysqlAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Alert details can be larger than MySQL's TEXT (64 KB).
  const large = db.getExecutor().adapter instanceof MysqlAdapter ? sql`mediumtext` : sql`text`;
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'varchar(64)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_by_tenant').on('webhooks').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('webhook_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('payload_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('payload', large, (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'varchar(40)')
    .addColumn('first_attempt_at', 'varchar(40)')
    .addColumn('last_attempt_at', 'varchar(40)')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'varchar(40)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  // The dispatcher's look for due rows; a webhook's list, newest first.
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_by_webhook').on('webhook_deliveries').columns(['webhook_id', 'event_position', 'id']).execute();

  await db.schema
    .createTable('webhook_outbox')
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_outbox').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhooks').execute();
}

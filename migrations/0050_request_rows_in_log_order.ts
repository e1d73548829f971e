/**
 * The per-request tables (`usage_requests`, `billing_requests`) keyed by the position of their
 * usage event in the log, `(event_position, event_version)`, instead of by request id.
 *
 * Every relayed request adds one row to each. Keyed by a random request id, each insert landed
 * on a random page of the primary key (and, in InnoDB, of the clustered table itself); keyed by
 * the log position, rows are appended in order. The request-id columns keep their index (the
 * projections' de-duplication reads it) but no longer a unique one: uniqueness per request id is
 * the projections' rule (src/projections/usage.ts, billing.ts), exact under their checkpoints.
 * Measured with bench/usage-projections.ts: about 15 % less projection work per usage event.
 *
 * Both tables are emptied here: the usage and billing projections' versions went up with this
 * change, so every instance rebuilds them from the log at startup.
 */
import type { CreateTableBuilder, Kysely } from 'kysely';

type Builder = CreateTableBuilder<string, string>;

function usageRequestColumns(table: Builder): Builder {
  return table
    .addColumn('request_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('request_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(191)')
    .addColumn('key_id', 'varchar(64)')
    .addColumn('channel_id', 'varchar(64)')
    .addColumn('provider', 'varchar(64)')
    .addColumn('model', 'varchar(191)', (c) => c.notNull())
    .addColumn('model_requested', 'varchar(191)', (c) => c.notNull())
    .addColumn('model_served', 'varchar(191)')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'varchar(100)')
    .addColumn('is_error', 'integer', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('total_tokens', 'bigint', (c) => c.notNull())
    .addColumn('usage_source', 'varchar(16)', (c) => c.notNull())
    .addColumn('stream', 'integer', (c) => c.notNull())
    .addColumn('latency_us', 'bigint', (c) => c.notNull())
    .addColumn('ttft_us', 'bigint')
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('hour', 'varchar(40)', (c) => c.notNull())
    .addColumn('day', 'varchar(40)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('recorded_at', 'varchar(40)', (c) => c.notNull());
}

function billingRequestColumns(table: Builder): Builder {
  return table
    .addColumn('dedupe_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('request_id', 'varchar(200)', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(64)')
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
    .addColumn('completion_tokens', 'integer', (c) => c.notNull())
    .addColumn('input_per_1m_micro', 'bigint', (c) => c.notNull())
    .addColumn('output_per_1m_micro', 'bigint', (c) => c.notNull())
    .addColumn('per_request_micro', 'bigint', (c) => c.notNull())
    .addColumn('cost_micro', 'bigint', (c) => c.notNull())
    .addColumn('charged_micro', 'bigint', (c) => c.notNull())
    .addColumn('coverage', 'varchar(10)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('event_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull());
}

async function usageRequestIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('usage_requests_by_request').on('usage_requests').column('request_id').execute();
  await db.schema.createIndex('usage_requests_by_tenant_time').on('usage_requests').columns(['tenant_id', 'started_at']).execute();
  await db.schema.createIndex('usage_requests_by_user').on('usage_requests').columns(['tenant_id', 'user_id', 'started_at']).execute();
  await db.schema.createIndex('usage_requests_by_key').on('usage_requests').columns(['tenant_id', 'key_id', 'started_at']).execute();
}

async function billingRequestIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('billing_requests_by_request').on('billing_requests').column('request_id').execute();
  await db.schema.createIndex('billing_requests_by_user_time').on('billing_requests').columns(['tenant_id', 'user_id', 'created_at']).execute();
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_requests').execute();
  await db.schema
    .createTable('usage_requests')
    .$call(usageRequestColumns)
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('event_version', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_requests_pk', ['event_position', 'event_version'])
    .execute();
  await usageRequestIndexes(db);

  await db.schema.dropTable('billing_requests').execute();
  await db.schema.createTable('billing_requests').$call(billingRequestColumns).addPrimaryKeyConstraint('billing_requests_pk', ['event_position', 'event_version']).execute();
  await billingRequestIndexes(db);
}

/** Back to the layouts of 0030 / 0040 (empty: the projections' older versions rebuild them). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_requests').execute();
  await db.schema.createTable('usage_requests').$call(usageRequestColumns).addPrimaryKeyConstraint('usage_requests_pk', ['request_key']).execute();
  await usageRequestIndexes(db);

  await db.schema.dropTable('billing_requests').execute();
  await db.schema.createTable('billing_requests').$call(billingRequestColumns).addPrimaryKeyConstraint('billing_requests_pk', ['dedupe_key']).execute();
  await billingRequestIndexes(db);
  await db.schema.createIndex('billing_requests_by_position').on('billing_requests').columns(['event_position', 'event_version']).execute();
}

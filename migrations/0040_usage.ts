/**
 * Usage read models (the `usage` projection, src/projections/usage.ts): one row per relay request
 * (`usage_requests`; a usage event published twice is stored once) and rollups per
 * tenant / user / key / channel / model by UTC hour (`usage_hourly`) and day (`usage_daily`).
 * Every figure is an integer (tokens, request counts, latency in microseconds). In the rollups a
 * missing user / key / channel is '' (they are part of the primary key).
 */
import type { CreateTableBuilder, Kysely } from 'kysely';

const ROLLUP_METRICS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'latency_us'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_requests')
    .addColumn('request_key', 'varchar(200)', (c) => c.primaryKey())
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
    .addColumn('recorded_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('usage_requests_by_request').on('usage_requests').column('request_id').execute();
  await db.schema.createIndex('usage_requests_by_tenant_time').on('usage_requests').columns(['tenant_id', 'started_at']).execute();
  await db.schema.createIndex('usage_requests_by_user').on('usage_requests').columns(['tenant_id', 'user_id', 'started_at']).execute();
  await db.schema.createIndex('usage_requests_by_key').on('usage_requests').columns(['tenant_id', 'key_id', 'started_at']).execute();

  await db.schema
    .createTable('usage_hourly')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('hour', 'varchar(40)', (c) => c.notNull())
    .addColumn('day', 'varchar(40)', (c) => c.notNull())
    .$call(addDimensionsAndMetrics)
    .addPrimaryKeyConstraint('usage_hourly_pk', ['tenant_id', 'hour', 'user_id', 'key_id', 'channel_id', 'model'])
    .execute();
  await db.schema.createIndex('usage_hourly_by_user').on('usage_hourly').columns(['tenant_id', 'user_id', 'hour']).execute();
  await db.schema.createIndex('usage_hourly_by_key').on('usage_hourly').columns(['tenant_id', 'key_id', 'hour']).execute();

  await db.schema
    .createTable('usage_daily')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('day', 'varchar(40)', (c) => c.notNull())
    .$call(addDimensionsAndMetrics)
    .addPrimaryKeyConstraint('usage_daily_pk', ['tenant_id', 'day', 'user_id', 'key_id', 'channel_id', 'model'])
    .execute();
  await db.schema.createIndex('usage_daily_by_user').on('usage_daily').columns(['tenant_id', 'user_id', 'day']).execute();
  await db.schema.createIndex('usage_daily_by_key').on('usage_daily').columns(['tenant_id', 'key_id', 'day']).execute();
}

/** The rollups' other dimensions ('' = none: they are part of the primary key) and their sums. */
type Dimension = 'user_id' | 'key_id' | 'channel_id' | 'model';
function addDimensionsAndMetrics<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C | Dimension> {
  let t: CreateTableBuilder<T, C | Dimension> = table
    .addColumn('user_id', 'varchar(191)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('channel_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('model', 'varchar(191)', (c) => c.notNull());
  for (const metric of ROLLUP_METRICS) t = t.addColumn(metric, 'bigint', (c) => c.notNull());
  return t;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_daily').execute();
  await db.schema.dropTable('usage_hourly').execute();
  await db.schema.dropTable('usage_requests').execute();
}

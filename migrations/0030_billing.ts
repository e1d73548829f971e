/**
 * Billing read models (the `billing` projection, src/projections/billing.ts): price tables,
 * tenant settings, credit balances, the immutable ledger, rated requests (also the per-request_id
 * de-duplication), plans, subscriptions with their period usage, and per-key spend (re-seeds API
 * key quota counters). Amounts are integer micro-credits in `bigint` columns.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // model '' is the tenant's default price (for every model without its own).
  await db.schema
    .createTable('billing_prices')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('model', 'varchar(200)', (c) => c.notNull())
    .addColumn('input_per_1m_micro', 'bigint', (c) => c.notNull())
    .addColumn('output_per_1m_micro', 'bigint', (c) => c.notNull())
    .addColumn('per_request_micro', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_by', 'varchar(64)')
    .addPrimaryKeyConstraint('billing_prices_pk', ['tenant_id', 'model'])
    .execute();

  await db.schema
    .createTable('billing_settings')
    .addColumn('tenant_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('relay_api_enabled', 'integer', (c) => c.notNull())
    .addColumn('subscription_covers_relay', 'varchar(16)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_by', 'varchar(64)')
    .execute();

  await db.schema
    .createTable('billing_balances')
    .addColumn('user_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('balance_micro', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_balances_by_tenant').on('billing_balances').columns(['tenant_id', 'user_id']).execute();

  // One row per event that moved a balance; never updated. Ordered by (event_position, event_version).
  await db.schema
    .createTable('billing_ledger')
    .addColumn('id', 'varchar(80)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('entry_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('amount_micro', 'bigint', (c) => c.notNull())
    .addColumn('balance_after_micro', 'bigint', (c) => c.notNull())
    .addColumn('request_id', 'varchar(200)')
    .addColumn('event_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('event_position', 'bigint', (c) => c.notNull())
    .addColumn('event_version', 'integer', (c) => c.notNull())
    .addColumn('model', 'varchar(200)')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('key_id', 'varchar(64)')
    .addColumn('reason', 'varchar(500)')
    .addColumn('plan_id', 'varchar(64)')
    .addColumn('subscription_id', 'varchar(64)')
    .addColumn('created_by', 'varchar(64)')
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_ledger_by_tenant_time').on('billing_ledger').columns(['tenant_id', 'created_at']).execute();
  await db.schema.createIndex('billing_ledger_by_user_time').on('billing_ledger').columns(['tenant_id', 'user_id', 'created_at']).execute();
  await db.schema.createIndex('billing_ledger_by_position').on('billing_ledger').columns(['event_position', 'event_version']).execute();

  // Every billable usage event once: the rating (prices in force, coverage, charge) and the
  // de-duplication key (the request id; a different request reusing the id gets a suffix).
  await db.schema
    .createTable('billing_requests')
    .addColumn('dedupe_key', 'varchar(200)', (c) => c.primaryKey())
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
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_requests_by_request').on('billing_requests').column('request_id').execute();
  await db.schema.createIndex('billing_requests_by_user_time').on('billing_requests').columns(['tenant_id', 'user_id', 'created_at']).execute();
  await db.schema.createIndex('billing_requests_by_position').on('billing_requests').columns(['event_position', 'event_version']).execute();

  await db.schema
    .createTable('billing_plans')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'varchar(1000)')
    .addColumn('period', 'varchar(64)', (c) => c.notNull())
    .addColumn('quotas', 'text', (c) => c.notNull())
    .addColumn('price_micro', 'bigint', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_plans_by_tenant').on('billing_plans').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('billing_subscriptions')
    .addColumn('user_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('plan_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('period_start', 'varchar(40)', (c) => c.notNull())
    .addColumn('period_end', 'varchar(40)', (c) => c.notNull())
    .addColumn('used', 'text', (c) => c.notNull())
    .addColumn('started_at', 'varchar(40)', (c) => c.notNull())
    .addColumn('canceled_at', 'varchar(40)')
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('billing_subscriptions_by_tenant').on('billing_subscriptions').columns(['tenant_id', 'user_id']).execute();

  await db.schema
    .createTable('billing_key_spend')
    .addColumn('key_id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('spent_micro', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['billing_key_spend', 'billing_subscriptions', 'billing_plans', 'billing_requests', 'billing_ledger', 'billing_balances', 'billing_settings', 'billing_prices']) {
    await db.schema.dropTable(table).execute();
  }
}

/**
 * Relay settings (issue 16): a channel's `rate_limits`, `retry_config` and `fallback_for`, and a
 * tenant's `relay_settings`, each as JSON text. NULL everywhere before: what the settings'
 * absence always meant (no limits, the global retry defaults, no fallbacks, the default relay
 * settings), so the projections need no rebuild.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('channels').addColumn('rate_limits', 'text').execute();
  await db.schema.alterTable('channels').addColumn('retry_config', 'text').execute();
  await db.schema.alterTable('channels').addColumn('fallback_for', 'text').execute();
  await db.schema.alterTable('billing_settings').addColumn('relay_settings', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('billing_settings').dropColumn('relay_settings').execute();
  await db.schema.alterTable('channels').dropColumn('fallback_for').execute();
  await db.schema.alterTable('channels').dropColumn('retry_config').execute();
  await db.schema.alterTable('channels').dropColumn('rate_limits').execute();
}

/**
 * Every schema migration, in order. Names are permanent: never rename or reorder one that has
 * shipped; add a new file instead. Applied at startup, in name order, by src/adapters/sql/migrate.ts
 * (each name is a `schema_migrations.version`).
 */
import type { Migration } from 'kysely';
import * as spine from './0001_spine.js';
import * as channels from './0002_channels.js';
import * as accounts from './0003_accounts.js';
import * as apiKeys from './0010_api_keys.js';
import * as presets from './0020_presets.js';
import * as billing from './0030_billing.js';
import * as usage from './0040_usage.js';
import * as requestRowsInLogOrder from './0050_request_rows_in_log_order.js';
import * as projectionQuarantine from './0060_projection_quarantine.js';
import * as liveViewSnapshots from './0100_live_view_snapshots.js';
import * as responses from './0110_responses.js';
import * as relaySettings from './0120_relay_settings.js';
import * as dataKeys from './0130_data_keys.js';
import * as conversations from './0140_conversations.js';
import * as files from './0150_files.js';
import * as conversationMessageFiles from './0160_conversation_message_files.js';
import * as alerts from './0180_alerts.js';
import * as webhooks from './0190_webhooks.js';
import * as logs from './0170_logs.js';
import * as webhookApiVersion from './0240_webhook_api_version.js';

export const migrations: Record<string, Migration> = {
  '0001_spine': spine,
  '0002_channels': channels,
  '0003_accounts': accounts,
  '0010_api_keys': apiKeys,
  '0020_presets': presets,
  '0030_billing': billing,
  '0040_usage': usage,
  '0050_request_rows_in_log_order': requestRowsInLogOrder,
  '0060_projection_quarantine': projectionQuarantine,
  '0100_live_view_snapshots': liveViewSnapshots,
  '0110_responses': responses,
  '0120_relay_settings': relaySettings,
  '0130_data_keys': dataKeys,
  '0140_conversations': conversations,
  '0150_files': files,
  '0160_conversation_message_files': conversationMessageFiles,
  '0180_alerts': alerts,
  '0190_webhooks': webhooks,
  '0170_logs': logs,
  '0240_webhook_api_version': webhookApiVersion,
};

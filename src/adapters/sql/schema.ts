/**
 * Table types of the read-model database, for Kysely. Each projection owns its tables (see the
 * projection's file in src/projections/); this interface is their union. Migrations in
 * /migrations create them portably for SQLite, MySQL/MariaDB and PostgreSQL.
 *
 * Portability rules: booleans are 0/1 integers, timestamps are ISO-8601 strings, JSON is text.
 */
import type { Generated } from 'kysely';

export interface ProjectionCheckpointsTable {
  name: string;
  /** Position of the last commit applied (0 = nothing yet). */
  position: number;
  /** Bumped by every rebuild; a projector holding an older generation must restart. */
  generation: number;
  /** Version of the projection code that built the table (a change triggers a rebuild). */
  version: number;
  updated_at: string;
}

/** An event a projection could not apply, set aside so the projection moves on (migration 0060). */
/** A live view's state at a log position (migration 0100; src/projections/runtime/live-view.ts). */
export interface LiveViewSnapshotsTable {
  name: string;
  schema_version: string;
  position: number;
  state: string;
  sha256: string;
  written_at: string;
}

export interface ProjectionQuarantineTable {
  projection: string;
  /** The event's commit position in the log and its version in its stream: which event it is. */
  event_position: number;
  event_version: number;
  event_id: string;
  stream: string;
  event_type: string;
  tenant_id: string;
  occurred_at: string;
  /** The error the projection threw (the latest, after a failed replay). */
  error: string;
  quarantined_at: string;
  /** When a replay applied it; null while it is still quarantined. */
  replayed_at: string | null;
}

export interface MaintenanceStateTable {
  id: string;
  enabled: number;
  message: string;
  changed_by: string | null;
  changed_at: string;
}

export interface ChannelsTable {
  id: string;
  tenant_id: string;
  name: string;
  type: string;
  base_url: string | null;
  key_sealed: string;
  key_masked: string;
  /** JSON array of model names. */
  models: string;
  /** JSON object alias -> upstream model. */
  model_mapping: string;
  priority: number;
  weight: number;
  enabled: number;
  /** JSON object of provider-specific settings. */
  config: string;
  /** JSON {requests_per_minute, tokens_per_minute}, or NULL: no limits (migration 0120). */
  rate_limits: string | null;
  /** JSON {max_retries, backoff_multiplier}, or NULL: the global defaults. */
  retry_config: string | null;
  /** JSON array of channel names / types this channel backs up, or NULL: none. */
  fallback_for: string | null;
  healthy: number;
  cooldown_until: string | null;
  health_reason: string | null;
  last_test_ok: number | null;
  last_test_status: number | null;
  last_test_latency_ms: number | null;
  last_test_error: string | null;
  last_tested_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  /** JSON of KeyPolicy (src/commands/keys/events.ts). */
  policy: string;
  revoked: number;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
}

export interface TenantsTable {
  /** The tenant's id (the row is the tenant). */
  tenant_id: string;
  name: string;
  disabled: number;
  created_at: string;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  /** Normalised (trimmed, lower-case); unique across the installation (reserved by the user decider). */
  email: string;
  /** scrypt, PHC string (src/auth/passwords.ts). */
  password_hash: string;
  role: string;
  disabled: number;
  mfa_enabled: number;
  /** SecretBox-sealed TOTP secret in force (null without MFA). */
  mfa_secret_sealed: string | null;
  /** SecretBox-sealed TOTP secret of an enrollment awaiting its first code. */
  mfa_pending_secret_sealed: string | null;
  mfa_recovery_codes_left: number;
  /** JSON object. */
  preferences: string;
  /** Set when the role changed after creation (the access live view tracks these users' roles). */
  role_changed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Installation-wide role definitions (seeded by migration). */
export interface RolesTable {
  name: string;
  description: string;
}

/** Role -> permission grants (seeded by migration); `*` grants everything. */
export interface PermissionsTable {
  role: string;
  permission: string;
}

export interface UserRolesTable {
  user_id: string;
  tenant_id: string;
  role: string;
}

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** SHA-256 hex of the refresh token in force. */
  refresh_token_hash: string;
  expires_at: string;
  revoked: number;
  revoked_at: string | null;
  revoke_reason: string | null;
  user_agent: string | null;
  ip: string | null;
  created_at: string;
  refreshed_at: string | null;
}

export interface KeyUsageTable {
  key_id: string;
  tenant_id: string;
  requests: number;
  total_tokens: number;
  updated_at: string;
}

/** One relay request (the `usage` projection). Tokens and latency are exact integers. */
export interface UsageRequestsTable {
  /** The request id; `<request id>~<n>` for another request that reused a client-chosen id (unique by the projection's rule). */
  request_key: string;
  request_id: string;
  /** Identifies the usage event beyond its request id (a republished duplicate has the same). */
  fingerprint: string;
  tenant_id: string;
  user_id: string | null;
  key_id: string | null;
  channel_id: string | null;
  provider: string | null;
  /** The model the request was routed by (after the key's and the request's aliases). */
  model: string;
  model_requested: string;
  model_served: string | null;
  status: number;
  error_code: string | null;
  /** 1 when the request failed (status >= 400 or an error code, e.g. a stream cut short). */
  is_error: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  usage_source: string;
  stream: number;
  latency_us: number;
  ttft_us: number | null;
  attempts: number;
  /** ISO time the request started; `hour` / `day` are its UTC bucket starts (ISO). */
  started_at: string;
  hour: string;
  day: string;
  /** The UsageRecorded event it came from, and its place in the log (the primary key). */
  event_id: string;
  event_position: number;
  event_version: number;
  recorded_at: string;
}

/** Usage per tenant / user / key / channel / model and UTC day ('' = none); sums are integers. */
export interface UsageDailyTable {
  tenant_id: string;
  day: string;
  user_id: string;
  key_id: string;
  channel_id: string;
  model: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Sum of the requests' latencies in microseconds. */
  latency_us: number;
}

/** Like usage_daily, per UTC hour (the row's `day` is the hour's day). */
export interface UsageHourlyTable extends UsageDailyTable {
  hour: string;
}

/** Presets, user and built-in (src/projections/presets.ts); deleted ones stay as tombstones. */
export interface PresetsTable {
  id: string;
  /** The owner's tenant; `_system` for built-ins. */
  tenant_id: string;
  /** null for built-ins. */
  owner_id: string | null;
  builtin: number;
  /** private | team | public (built-ins: public). */
  visibility: string;
  category: string | null;
  lang: string | null;
  name: string;
  description: string;
  /** Lower-cased tags, each between newlines ("\nwriting\nemail\n"), for exact tag filters. */
  tags_text: string;
  /** Lower-cased name, description, tags, system prompt and context, newline-separated. */
  search_text: string;
  /** JSON of the preset's content (PresetContentData plus visibility). */
  data: string;
  /** Built-ins: the data file's version. */
  version: string | null;
  /** Events in the preset's history (user presets) / publications (built-ins). */
  revision: number;
  cloned_from: string | null;
  deleted: number;
  /** Log position of the commit that created the row. */
  created_position: number;
  /** Log position of the row's last change: the sync cursor. */
  position: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** Stored responses of the Responses API (src/projections/responses.ts); deleted ones keep an empty row. */
export interface ResponsesTable {
  id: string;
  tenant_id: string;
  /** Who may read, chain and delete it (a user id). */
  owner_id: string;
  user_id: string | null;
  key_id: string | null;
  model: string;
  status: string;
  previous_response_id: string | null;
  /** Unix seconds (bigint: may come back as a string, use Number()). */
  created_at: number;
  instructions: string | null;
  /** JSON: the request's new input items. */
  input: string;
  /** JSON: the output items. */
  output: string;
  /** JSON, or null. */
  usage: string | null;
  /** JSON: the rest of the response object. */
  details: string;
  deleted: number;
  position: number;
  stored_at: string;
  deleted_at: string | null;
}

/** Billing (the `billing` projection). Amounts: integer micro-credits (bigint: may come back as strings, use Number()). */
export interface BillingPricesTable {
  tenant_id: string;
  /** '' = the tenant's default price. */
  model: string;
  input_per_1m_micro: number;
  output_per_1m_micro: number;
  per_request_micro: number;
  updated_at: string;
  updated_by: string | null;
}

export interface BillingSettingsTable {
  tenant_id: string;
  relay_api_enabled: number;
  /** included | excluded | hybrid */
  subscription_covers_relay: string;
  /** JSON of RelaySettings (src/billing/rating.ts); NULL: the defaults (migration 0120). */
  relay_settings: string | null;
  /** The tenant's storage quota for files; NULL: unlimited (migration 0150). bigint: may be a string. */
  storage_quota_bytes: number | string | null;
  updated_at: string;
  updated_by: string | null;
}

export interface BillingBalancesTable {
  user_id: string;
  tenant_id: string;
  balance_micro: number;
  updated_at: string;
}

export interface BillingLedgerTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** charge | topup | adjustment | subscription_fee */
  entry_type: string;
  amount_micro: number;
  balance_after_micro: number;
  request_id: string | null;
  /** The event this entry comes from (for a charge: the UsageRecorded event). */
  event_id: string;
  event_position: number;
  event_version: number;
  model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  key_id: string | null;
  reason: string | null;
  plan_id: string | null;
  subscription_id: string | null;
  created_by: string | null;
  created_at: string;
}

export interface BillingRequestsTable {
  dedupe_key: string;
  request_id: string;
  fingerprint: string;
  tenant_id: string;
  user_id: string;
  key_id: string | null;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  input_per_1m_micro: number;
  output_per_1m_micro: number;
  per_request_micro: number;
  cost_micro: number;
  charged_micro: number;
  /** none | partial | full */
  coverage: string;
  event_id: string;
  event_position: number;
  event_version: number;
  created_at: string;
}

export interface BillingPlansTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  /** JSON: "day" | "week" | "month" | {"days": n} */
  period: string;
  /** JSON array of {models, requests, tokens}. */
  quotas: string;
  price_micro: number;
  deleted: number;
  created_at: string;
  updated_at: string;
}

export interface BillingSubscriptionsTable {
  user_id: string;
  tenant_id: string;
  subscription_id: string;
  plan_id: string;
  /** JSON of PlanTerms (src/commands/plans/events.ts) for the current period. */
  terms: string;
  /** active | canceled (an active one whose period_end passed is shown as expired) */
  status: string;
  period_start: string;
  period_end: string;
  /** JSON array of {requests, tokens}, parallel to the terms' quotas. */
  used: string;
  started_at: string;
  canceled_at: string | null;
  updated_at: string;
}

export interface BillingKeySpendTable {
  key_id: string;
  tenant_id: string;
  spent_micro: number;
  updated_at: string;
}

/** Data keys (migration 0130; src/adapters/data-keys/sql.ts): not a projection, never rebuilt. */
export interface DataKeysTable {
  scope: string;
  /** The key sealed with SECRET (src/crypto/secret-box.ts); NULL once destroyed. */
  sealed_key: string | null;
  created_at: string;
  destroyed_at: string | null;
}

/** Conversations, the list view (src/projections/conversations.ts); deleted ones stay as tombstones without text. */
export interface ConversationsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** Clear text, opened from the sealed events; NULL when untitled or deleted. */
  title: string | null;
  title_generated: number;
  /** Lower-cased title, for search. */
  search_title: string | null;
  model: string | null;
  preset_id: string | null;
  temperature: number | null;
  max_tokens: number | null;
  system_prompt: string | null;
  pinned: number;
  archived: number;
  message_count: number;
  last_message_at: string | null;
  last_activity_at: string;
  /** Log position of the last activity (start, message, edit): list order and list cursor (bigint: may be a string). */
  activity_position: number;
  deleted: number;
  deleted_at: string | null;
  /** Log position of the start (sync: created or updated). */
  created_position: number;
  /** Log position of the row's last change: the sync cursor. */
  position: number;
  created_at: string;
  updated_at: string;
}

/** Every message of every conversation, current or superseded, in stream order (`seq`). */
export interface ConversationMessagesTable {
  conversation_id: string;
  id: string;
  user_id: string;
  seq: number;
  role: string;
  content: string;
  /** Lower-cased content, for search. */
  search_text: string;
  model_requested: string | null;
  model_served: string | null;
  finish_reason: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  latency_ms: number | null;
  usage_request_id: string | null;
  /** The files attached to the message: a JSON array of ids, or null (none). */
  file_ids: string | null;
  superseded: number;
  edited_at: string | null;
  created_at: string;
}

/** Uploaded files (src/projections/files.ts); deleted ones stay as tombstones without a name. */
export interface FilesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** Clear text, opened from the sealed event; NULL once deleted (its key destroyed). */
  filename: string | null;
  purpose: string;
  /** bigint: may be a string. */
  bytes: number | string;
  sha256: string;
  mime_type: string;
  storage_key: string;
  /** uploaded | processing | processed | error */
  status: string;
  /** file_processing_timeout | file_processing_error, when `error`. */
  status_code: string | null;
  status_reason: string | null;
  processing_started_at: string | null;
  text_key: string | null;
  text_chars: number | string | null;
  truncated: number;
  pages: number | null;
  ocr_pages: number | null;
  created_at: string;
  processed_at: string | null;
  deleted: number;
  deleted_at: string | null;
}

/** An alert rule of a tenant and its firing state (migration 0180, projection `alerts`). */
export interface AlertRulesTable {
  rule_id: string;
  tenant_id: string;
  name: string;
  kind: string;
  threshold: number;
  window_seconds: number;
  severity: string;
  /** JSON array of webhook ids. */
  notify: string;
  enabled: number;
  /** The open alert's id, NULL when the rule is not firing. */
  firing_alert_id: string | null;
  firing_value: number | null;
  firing_since: string | null;
  /** The rule stream's version after its last event (what the evaluator fires against). */
  version: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** Webhooks of a tenant (src/projections/webhooks.ts); `events` is a JSON array, the secret sealed ('webhook-secrets'). */
export interface WebhooksTable {
  id: string;
  tenant_id: string;
  url: string;
  events: string;
  secret_sealed: string;
  enabled: number;
  /** The payload format: v2 or v1 (migration 0240). */
  api_version: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** One firing of a rule (migration 0180, projection `alerts`). */
export interface AlertsTable {
  /** `alert_` + a time-ordered hex id: orders the list and is its cursor. */
  alert_id: string;
  tenant_id: string;
  rule_id: string;
  rule_name: string;
  kind: string;
  severity: string;
  state: 'firing' | 'resolved';
  value: number;
  threshold: number;
  window_seconds: number;
  /** JSON array of webhook ids told. */
  notify: string;
  message: string;
  /** JSON object: what was measured. */
  details: string;
  fired_at: string;
  resolved_at: string | null;
  resolved_value: number | null;
  resolved_reason: string | null;
  resolved_message: string | null;
}

/** Each instance's last report for the alert evaluator (written directly, not projected; migration 0180). */
export interface AlertInstancesTable {
  instance_id: string;
  /** Usage events in the instance's journal, not yet appended to the log. */
  spool_depth: number;
  reported_at: string;
}

/** One notice for one webhook and its attempts (migration 0190); status pending | delivered | failed. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  tenant_id: string;
  event_key: string;
  event_type: string;
  /** Log position of the notice's event (bigint: may be a string). */
  event_position: number;
  payload_id: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  first_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** The highest log position deliveries were made for (kept by a rebuild: decision 0210). */
export interface WebhookOutboxTable {
  name: string;
  /** bigint: may be a string. */
  position: number;
}

/** The searchable log index (migration 0170, src/logs/index/): process entries and entries derived from events. */
export interface LogEntriesTable {
  /** Surrogate key (auto-increment) the full-text index points at; never set on insert. */
  seq: Generated<number>;
  id: string;
  timestamp: string;
  level: string;
  /** 0 DEBUG .. 4 CRITICAL (levelRank in src/logs/entry.ts). */
  level_rank: number;
  category: string;
  component: string;
  event: string;
  user_id: string | null;
  session_id: string | null;
  /** NULL: installation-wide (system) entry, seen by operators only. */
  tenant_id: string | null;
  request_id: string | null;
  ip_address: string | null;
  message: string;
  /** JSON text. */
  details: string;
  instance: string | null;
  /** 'process' (written by an instance) or 'event' (the logs projection). */
  source: string;
}

export interface ReadModelTables {
  alert_instances: AlertInstancesTable;
  alert_rules: AlertRulesTable;
  alerts: AlertsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_outbox: WebhookOutboxTable;
  log_entries: LogEntriesTable;
  files: FilesTable;
  data_keys: DataKeysTable;
  conversations: ConversationsTable;
  conversation_messages: ConversationMessagesTable;
  projection_checkpoints: ProjectionCheckpointsTable;
  projection_quarantine: ProjectionQuarantineTable;
  live_view_snapshots: LiveViewSnapshotsTable;
  maintenance_state: MaintenanceStateTable;
  channels: ChannelsTable;
  tenants: TenantsTable;
  users: UsersTable;
  roles: RolesTable;
  permissions: PermissionsTable;
  user_roles: UserRolesTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  key_usage: KeyUsageTable;
  presets: PresetsTable;
  responses: ResponsesTable;
  usage_requests: UsageRequestsTable;
  usage_hourly: UsageHourlyTable;
  usage_daily: UsageDailyTable;
  billing_prices: BillingPricesTable;
  billing_settings: BillingSettingsTable;
  billing_balances: BillingBalancesTable;
  billing_ledger: BillingLedgerTable;
  billing_requests: BillingRequestsTable;
  billing_plans: BillingPlansTable;
  billing_subscriptions: BillingSubscriptionsTable;
  billing_key_spend: BillingKeySpendTable;
}

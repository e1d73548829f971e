/**
 * How the billing tables' rows are written and read back, shared by the projection, its usage
 * batches, the billing live view (src/views/billing.ts) and the billing queries.
 */
import type { Insertable } from 'kysely';
import type { BillingLedgerTable, BillingPricesTable, BillingSettingsTable, BillingSubscriptionsTable } from '../../adapters/sql/schema.js';
import type { PlanTerms } from '../../commands/plans/events.js';
import type { StoredEvent } from '../../ports/event-store.js';
import type { Price } from '../../billing/pricing.js';
import { DEFAULT_RELAY_SETTINGS, DEFAULT_SETTINGS, type CoverageMode, type RelaySettings, type QuotaUse, type Settings, type SubscriptionSnapshot } from '../../billing/rating.js';

export type LedgerEntryType = 'charge' | 'topup' | 'adjustment' | 'subscription_fee';

/** The default price's row in billing_prices. */
export const DEFAULT_PRICE_MODEL = '';

const n = (v: number | string | bigint) => Number(v);

export const priceOfRow = (row: Pick<BillingPricesTable, 'input_per_1m_micro' | 'output_per_1m_micro' | 'per_request_micro'>): Price => ({
  input_per_1m_micro: n(row.input_per_1m_micro),
  output_per_1m_micro: n(row.output_per_1m_micro),
  per_request_micro: n(row.per_request_micro),
});

/** A billing_settings row's settings; `relay_settings` NULL (rows from before migration 0120): the defaults. */
export const settingsOfRow = (row: BillingSettingsTable | undefined): Settings =>
  row
    ? {
        relay_api_enabled: n(row.relay_api_enabled) === 1,
        subscription_covers_relay: row.subscription_covers_relay as CoverageMode,
        relay_settings: row.relay_settings ? { ...DEFAULT_RELAY_SETTINGS, ...(JSON.parse(row.relay_settings) as Partial<RelaySettings>) } : DEFAULT_RELAY_SETTINGS,
        storage_quota_bytes: row.storage_quota_bytes === null || row.storage_quota_bytes === undefined ? null : n(row.storage_quota_bytes),
      }
    : DEFAULT_SETTINGS;

const DEFAULT_RELAY_SETTINGS_JSON = JSON.stringify(DEFAULT_RELAY_SETTINGS);

/**
 * The settings as a billing_settings row's columns. Default relay settings are NULL, as in the
 * rows written before migration 0120: a rebuild or the audit's replay writes what they hold.
 */
export function settingsRow(settings: Settings): Pick<BillingSettingsTable, 'relay_api_enabled' | 'subscription_covers_relay' | 'relay_settings' | 'storage_quota_bytes'> {
  const relay = JSON.stringify(settings.relay_settings);
  return {
    relay_api_enabled: settings.relay_api_enabled ? 1 : 0,
    subscription_covers_relay: settings.subscription_covers_relay,
    relay_settings: relay === DEFAULT_RELAY_SETTINGS_JSON ? null : relay,
    storage_quota_bytes: settings.storage_quota_bytes,
  };
}

export function snapshotOfRow(row: BillingSubscriptionsTable): SubscriptionSnapshot {
  const terms = JSON.parse(row.terms) as PlanTerms;
  return { status: row.status as 'active' | 'canceled', period_start: row.period_start, period_end: row.period_end, canceled_at: row.canceled_at, quotas: terms.quotas, used: JSON.parse(row.used) as QuotaUse[] };
}

/** A subscription's `used` at the start of a period: nothing used of any quota. */
export const freshUsage = (terms: PlanTerms): QuotaUse[] => terms.quotas.map(() => ({ requests: 0, tokens: 0 }));

export interface EntryFields {
  type: LedgerEntryType;
  tenantId: string;
  userId: string;
  amount: number;
  requestId?: string | null;
  model?: string | null;
  promptTokens?: number | null;
  completionTokens?: number | null;
  keyId?: string | null;
  reason?: string | null;
  planId?: string | null;
  subscriptionId?: string | null;
  by?: string | null;
}

/** The ledger row of one entry (id = the event's id: one entry per event at most). */
export function ledgerRow(stored: StoredEvent, e: EntryFields, balanceAfter: number): Insertable<BillingLedgerTable> {
  return {
    id: stored.id,
    tenant_id: e.tenantId,
    user_id: e.userId,
    entry_type: e.type,
    amount_micro: e.amount,
    balance_after_micro: balanceAfter,
    request_id: e.requestId ?? null,
    event_id: stored.id,
    event_position: stored.position,
    event_version: stored.version,
    model: e.model ?? null,
    prompt_tokens: e.promptTokens ?? null,
    completion_tokens: e.completionTokens ?? null,
    key_id: e.keyId ?? null,
    reason: e.reason ?? null,
    plan_id: e.planId ?? null,
    subscription_id: e.subscriptionId ?? null,
    created_by: e.by ?? null,
    created_at: stored.occurred_at,
  };
}

/** The billing API's shapes (request and response), shared by its route plugins and the OpenAPI document. */
import { z } from 'zod';
import { CREDITS_PATTERN } from '../../billing/money.js';
import { COVERAGE_MODES } from '../../billing/rating.js';
import { PlanPeriod, PlanQuota } from '../../commands/plans/events.js';

/** Permissions (held by `admin` through `*`). */
export const BILLING_MANAGE = 'billing:manage';
export const SETTINGS_MANAGE = 'settings:manage';

export const CreditsInput = z
  .union([z.string().regex(new RegExp(CREDITS_PATTERN), 'a decimal number of credits with at most 6 decimals'), z.number()])
  .describe('credits: a decimal string ("12.5") or a number, at most 6 decimals; kept as integer micro-credits');

const Decimal = z.string().describe('credits as a decimal string with 6 decimals');
const Micro = z.number().int().describe('the same amount in integer micro-credits (1 credit = 1,000,000)');

export const PriceInput = z.object({
  input_price: CreditsInput.describe('credits per 1M prompt tokens'),
  output_price: CreditsInput.describe('credits per 1M completion tokens'),
  per_request_price: CreditsInput.optional().describe('credits per request (default 0)'),
});
export const ModelPriceInput = PriceInput.extend({ model: z.string().min(1).max(200) });
export const BulkPricingInput = z.object({
  default: PriceInput.optional().describe('the price of every model without its own'),
  models: z.record(z.string().min(1).max(200), PriceInput).optional().describe('model -> price; models not named keep theirs'),
});

export const PriceView = z.object({
  input_price: Decimal,
  output_price: Decimal,
  per_request_price: Decimal,
  input_per_1m_micro: Micro,
  output_per_1m_micro: Micro,
  per_request_micro: Micro,
});
export const PricingView = z.object({
  object: z.literal('pricing'),
  tenant_id: z.string(),
  unit: z.string(),
  default: PriceView.extend({ updated_at: z.string().nullable(), updated_by: z.string().nullable() }).describe('unknown models; free (all zero) until set'),
  models: z.array(PriceView.extend({ model: z.string(), updated_at: z.string(), updated_by: z.string().nullable() })),
}).meta({ id: 'Pricing' });

export const LedgerEntryType = z.enum(['charge', 'topup', 'adjustment', 'subscription_fee']);
export const LedgerEntryView = z.object({
  id: z.string(),
  object: z.literal('billing.ledger_entry'),
  tenant_id: z.string(),
  user_id: z.string(),
  type: LedgerEntryType,
  amount: Decimal.describe('signed: negative for charges and fees'),
  amount_micro: Micro,
  balance_after: Decimal.describe("the user's balance after this entry"),
  balance_after_micro: Micro,
  request_id: z.string().nullable().describe('charges: the relay request'),
  event_id: z.string().describe('the event this entry comes from (charges: the UsageRecorded event)'),
  model: z.string().nullable(),
  prompt_tokens: z.number().nullable(),
  completion_tokens: z.number().nullable(),
  key_id: z.string().nullable(),
  reason: z.string().nullable(),
  plan_id: z.string().nullable(),
  subscription_id: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
});
export const LedgerList = z.object({ object: z.literal('list'), data: z.array(LedgerEntryView) }).describe('with format=csv: text/csv, one header line, the same columns').meta({ id: 'LedgerList' });

export const LedgerQuery = z.object({
  format: z.enum(['json', 'csv']).default('json'),
  from: z.string().max(40).optional().describe('ISO date or time, inclusive'),
  to: z.string().max(40).optional().describe('ISO date or time, exclusive'),
  type: LedgerEntryType.optional(),
  limit: z.coerce.number().int().min(1).max(100_000).default(10_000),
});

export const StatementQuery = z.object({ period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a calendar month: YYYY-MM').describe('calendar month, UTC (e.g. 2026-11)') });

const StatementTotals = z.object({
  opening_balance: Decimal,
  opening_balance_micro: Micro,
  topups: Decimal,
  topups_micro: Micro,
  adjustments: Decimal,
  adjustments_micro: Micro,
  charges: Decimal.describe('negative'),
  charges_micro: Micro,
  subscription_fees: Decimal.describe('negative'),
  subscription_fees_micro: Micro,
  closing_balance: Decimal,
  closing_balance_micro: Micro,
  requests: z.number().describe('billable requests in the period'),
  covered_requests: z.number().describe('of which covered (fully or partly) by a subscription'),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  list_cost: Decimal.describe('the requests at list price, before subscription coverage'),
  list_cost_micro: Micro,
});
export const StatementView = z.object({
  object: z.literal('billing.statement'),
  tenant_id: z.string(),
  period: z.string(),
  from: z.string(),
  to: z.string(),
  users: z.array(StatementTotals.extend({ user_id: z.string() })),
  totals: StatementTotals,
}).meta({ id: 'Statement' });

export const CreditMovementInput = z.object({ amount: CreditsInput, reason: z.string().trim().min(1).max(500) });

export const PlanQuotaView = PlanQuota;
export const PlanInput = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(1000).nullable().optional(),
  period: PlanPeriod,
  quotas: z.array(PlanQuota.partial({ requests: true, tokens: true })).max(100).default([]).describe('each: {models: [...] (or ["*"]), requests: n} or {models, tokens: n}'),
  price: CreditsInput.describe('credits charged at the start of every period'),
});
export const PlanUpdateInput = PlanInput.partial();
export const PlanView = z.object({
  id: z.string(),
  object: z.literal('plan'),
  tenant_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  period: PlanPeriod,
  quotas: z.array(PlanQuota),
  price: Decimal,
  price_micro: Micro,
  deleted: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Plan' });

export const SubscriptionView = z.object({
  id: z.string(),
  object: z.literal('subscription'),
  tenant_id: z.string(),
  user_id: z.string(),
  plan_id: z.string(),
  plan_name: z.string(),
  status: z.enum(['active', 'expired', 'canceled']).describe('expired: the period ended; no coverage until renewed'),
  period: PlanPeriod,
  price: Decimal,
  price_micro: Micro,
  current_period_start: z.string(),
  current_period_end: z.string(),
  quotas: z.array(PlanQuota.extend({ used_requests: z.number(), used_tokens: z.number(), remaining: z.number().describe('in the quota’s unit (requests or tokens)') })),
  started_at: z.string(),
  canceled_at: z.string().nullable(),
  updated_at: z.string(),
}).meta({ id: 'Subscription' });

export const CreditBalanceView = z.object({
  object: z.literal('credit_balance'),
  tenant_id: z.string(),
  user_id: z.string(),
  balance: Decimal,
  balance_micro: Micro,
  updated_at: z.string().nullable(),
  subscription: SubscriptionView.nullable(),
}).meta({ id: 'CreditBalance' });
export const CreditMovementView = CreditBalanceView.extend({ entry: LedgerEntryView.nullable().describe('the ledger entry written') });

const ProviderName = z.string().min(1).max(100);

const RELAY_SETTINGS_DESCRIPTIONS = {
  enabled: 'the same switch as relay_api_enabled (an alias): false, relay requests with API keys answer 403 relay_disabled',
  default_provider: 'channel type or name tried first when a request names no provider_config (null: none); the other channels follow',
  fallback_providers: 'channel types or names tried after default_provider, in order; then every other channel',
  rate_limiting: "false: API keys' rate limits and concurrency limits are not enforced for the tenant (quota, billing and channels' own rate_limits still are)",
  usage_tracking: "false: the tenant's per-request listings (GET /v1/admin/usage/requests, /v1/usage/requests) answer empty lists; usage events are still written (billing, quotas, audit, the summed /v1/admin/usage)",
  error_logging: "false: the details of the tenant's upstream failures are not written to the server log (the client's answer and the usage event are unchanged)",
  conversation_title_model: "the model asked (through the relay, billed as the user's own traffic) for a conversation's title after its first exchange; null: the first words of the first message",
} as const;

export const RelaySettingsView = z
  .object({
    enabled: z.boolean().describe(RELAY_SETTINGS_DESCRIPTIONS.enabled),
    default_provider: z.string().nullable().describe(RELAY_SETTINGS_DESCRIPTIONS.default_provider),
    fallback_providers: z.array(z.string()).describe(RELAY_SETTINGS_DESCRIPTIONS.fallback_providers),
    rate_limiting: z.boolean().describe(RELAY_SETTINGS_DESCRIPTIONS.rate_limiting),
    usage_tracking: z.boolean().describe(RELAY_SETTINGS_DESCRIPTIONS.usage_tracking),
    error_logging: z.boolean().describe(RELAY_SETTINGS_DESCRIPTIONS.error_logging),
    conversation_title_model: z.string().nullable().describe(RELAY_SETTINGS_DESCRIPTIONS.conversation_title_model),
  })
  .describe('how the relay treats the tenant\'s requests (README "Relay settings of a tenant")');

export const SettingsView = z.object({
  object: z.literal('settings'),
  tenant_id: z.string(),
  relay_api_enabled: z.boolean().describe('false: relay requests with API keys answer 403 relay_disabled (the chat UI is unaffected); also relay_settings.enabled'),
  subscription_covers_relay: z.enum(COVERAGE_MODES).describe('API-key traffic: included | excluded | hybrid (see README "Billing")'),
  relay_settings: RelaySettingsView,
  storage_quota_bytes: z.number().nullable().describe("bytes the tenant's live files may take in storage (null: unlimited); an upload past it answers 413 storage_quota_exceeded"),
  updated_at: z.string().nullable(),
  updated_by: z.string().nullable(),
}).meta({ id: 'TenantSettings' });
export const RelaySettingsInput = z
  .strictObject({
    enabled: z.boolean().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.enabled),
    default_provider: ProviderName.nullable().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.default_provider),
    fallback_providers: z.array(ProviderName).max(20).optional().describe(RELAY_SETTINGS_DESCRIPTIONS.fallback_providers),
    rate_limiting: z.boolean().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.rate_limiting),
    usage_tracking: z.boolean().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.usage_tracking),
    error_logging: z.boolean().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.error_logging),
    conversation_title_model: z.string().trim().min(1).max(256).nullable().optional().describe(RELAY_SETTINGS_DESCRIPTIONS.conversation_title_model),
  })
  .describe('fields given change; an unknown one is a 400 unknown_field');
export const SettingsInput = z.object({
  relay_api_enabled: z.boolean().optional().describe('kept as an alias of relay_settings.enabled (both given: they must agree, else 400 conflicting_fields)'),
  subscription_covers_relay: z.enum(COVERAGE_MODES).optional(),
  relay_settings: RelaySettingsInput.optional(),
  storage_quota_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional().describe("bytes the tenant's live files may take (null: unlimited)"),
});

/**
 * The billing rules, as pure functions shared by the billing projection (the ledger: exact, in log
 * order) and the billing live view (admission on the hot path: the same rules over memory).
 *
 * A usage event is *billable* unless it generated nothing (status >= 400 and zero tokens). A
 * billable request's *cost* is its price (src/billing/pricing.ts); what is *charged* to the
 * user's credits is the cost minus what an active subscription covers:
 *
 * - Chat-UI traffic (session tokens, `key_id` null): the subscription first, then credits.
 * - API-key traffic, by the tenant's `subscription_covers_relay`:
 *   - `hybrid` (default): the subscription covers up to its quota, the overage is charged.
 *   - `included`: the subscription covers it; once the quota is used up requests are refused and
 *     credits are never used (requests already in flight when it ran out count against the quota).
 *   - `excluded`: always charged to credits; the subscription is not touched.
 * A model that the plan has no quota for is charged to credits in every mode.
 */
import { hash } from 'node:crypto';
import type { UsageData } from '../commands/usage/events.js';
import { formatCredits } from './money.js';
import { chargeMicro, isFree, type Price } from './pricing.js';

export const COVERAGE_MODES = ['included', 'excluded', 'hybrid'] as const;
export type CoverageMode = (typeof COVERAGE_MODES)[number];

/**
 * How the relay treats the tenant's requests (besides `relay_api_enabled`, which the API also
 * shows as `relay_settings.enabled`). See README "Relay settings of a tenant".
 */
export interface RelaySettings {
  /** Channel type or name tried first when a request names no provider_config (null: none). */
  default_provider: string | null;
  /** Channel types or names tried after `default_provider` (then every other channel). */
  fallback_providers: string[];
  /** false: API keys' rate limits and concurrency are not enforced (their quota still is). */
  rate_limiting: boolean;
  /** false: the tenant's per-request usage listings answer empty lists (usage events are still written). */
  usage_tracking: boolean;
  /** false: the details of upstream failures are not logged for the tenant's requests. */
  error_logging: boolean;
  /** The model that titles conversations after their first exchange (null: the first words of the first message). */
  conversation_title_model: string | null;
}
export const DEFAULT_RELAY_SETTINGS: RelaySettings = Object.freeze({ default_provider: null, fallback_providers: Object.freeze([]) as unknown as string[], rate_limiting: true, usage_tracking: true, error_logging: true, conversation_title_model: null });

export interface Settings {
  relay_api_enabled: boolean;
  subscription_covers_relay: CoverageMode;
  relay_settings: RelaySettings;
  /** Bytes the tenant's live files may take in storage (null: unlimited). */
  storage_quota_bytes: number | null;
}
export const DEFAULT_SETTINGS: Settings = Object.freeze({ relay_api_enabled: true, subscription_covers_relay: 'hybrid', relay_settings: DEFAULT_RELAY_SETTINGS, storage_quota_bytes: null });

/** The settings after a `TenantSettingsChanged` (its fields that are present replace the current ones). */
export function applySettingsChange(
  current: Settings,
  change: { relay_api_enabled?: boolean; subscription_covers_relay?: CoverageMode; relay_settings?: Partial<RelaySettings>; storage_quota_bytes?: number | null },
): Settings {
  const relay = change.relay_settings;
  return {
    relay_api_enabled: change.relay_api_enabled ?? current.relay_api_enabled,
    subscription_covers_relay: change.subscription_covers_relay ?? current.subscription_covers_relay,
    relay_settings: relay
      ? {
          default_provider: relay.default_provider !== undefined ? relay.default_provider : current.relay_settings.default_provider,
          fallback_providers: relay.fallback_providers ?? current.relay_settings.fallback_providers,
          rate_limiting: relay.rate_limiting ?? current.relay_settings.rate_limiting,
          usage_tracking: relay.usage_tracking ?? current.relay_settings.usage_tracking,
          error_logging: relay.error_logging ?? current.relay_settings.error_logging,
          conversation_title_model: relay.conversation_title_model !== undefined ? relay.conversation_title_model : current.relay_settings.conversation_title_model,
        }
      : current.relay_settings,
    storage_quota_bytes: change.storage_quota_bytes !== undefined ? change.storage_quota_bytes : current.storage_quota_bytes,
  };
}

/** A plan's allowance for some models: a request count or a token count per period. `*` = every model. */
export interface Quota {
  models: string[];
  requests: number | null;
  tokens: number | null;
}
export interface QuotaUse {
  requests: number;
  tokens: number;
}

export type Period = 'day' | 'week' | 'month' | { days: number };

/** A subscription as billing sees it (the plan's terms were copied into it when it started / renewed). */
export interface SubscriptionSnapshot {
  status: 'active' | 'canceled';
  period_start: string;
  period_end: string;
  /** Coverage ends here when canceled (a request that started before still counts as covered). */
  canceled_at: string | null;
  quotas: Quota[];
  /** Parallel to `quotas`: what this period has used. */
  used: QuotaUse[];
}

export type TrafficKind = 'key' | 'ui';

export const trafficOf = (usage: { key_id: string | null }): TrafficKind => (usage.key_id === null ? 'ui' : 'key');

/** Requests that generated nothing cost nothing. */
export const isBillable = (usage: { status: number; total_tokens: number }) => !(usage.status >= 400 && usage.total_tokens === 0);

/** The model a request is priced by: the one it was routed to (after the key's and the request's aliases). */
export const billedModel = (usage: Pick<UsageData, 'model_routed' | 'model_served' | 'model_requested'>) => usage.model_routed ?? usage.model_served ?? usage.model_requested;

/**
 * Identifies one request's usage event beyond its request id. A usage event republished after a
 * crash (spool replay) is byte-identical, so it has the same fingerprint and is ignored; a
 * *different* request that reused a client-supplied X-Request-Id has another one and is billed.
 */
export function usageFingerprint(u: UsageData): string {
  const parts = [u.request_id, u.started_at, u.latency_ms, u.status, u.prompt_tokens, u.completion_tokens, u.user_id, u.key_id, u.channel_id, u.model_requested];
  // crypto.hash: the one-shot form, a third cheaper than createHash() for an input this small.
  return hash('sha256', JSON.stringify(parts)).slice(0, 32);
}

/** The end of a period that starts at `startIso` (calendar months in UTC, clamped to the month's last day). */
export function periodEnd(startIso: string, period: Period): string {
  const start = new Date(startIso);
  if (period === 'day') return new Date(start.getTime() + 86_400_000).toISOString();
  if (period === 'week') return new Date(start.getTime() + 7 * 86_400_000).toISOString();
  if (typeof period === 'object') return new Date(start.getTime() + period.days * 86_400_000).toISOString();
  const end = new Date(start);
  const day = start.getUTCDate();
  end.setUTCDate(1);
  end.setUTCMonth(end.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1, 0)).getUTCDate();
  end.setUTCDate(Math.min(day, lastDay));
  return end.toISOString();
}

/** Whether the subscription covers a request that started at `at`: within the period, before any cancellation. */
export function isActiveAt(sub: SubscriptionSnapshot | undefined, at: string | number): sub is SubscriptionSnapshot {
  if (!sub) return false;
  const t = typeof at === 'number' ? at : Date.parse(at);
  if (sub.status === 'canceled' && (sub.canceled_at === null || t >= Date.parse(sub.canceled_at))) return false;
  return t >= Date.parse(sub.period_start) && t < Date.parse(sub.period_end);
}

/** The quota that applies to `model`: the first that names it, else the first with `*`; -1 if none. */
export function quotaIndexFor(quotas: readonly Quota[], model: string): number {
  const named = quotas.findIndex((q) => q.models.includes(model));
  return named >= 0 ? named : quotas.findIndex((q) => q.models.includes('*'));
}

export function remainingOf(quota: Quota, used: QuotaUse | undefined): number {
  const u = used ?? { requests: 0, tokens: 0 };
  return quota.requests !== null ? quota.requests - u.requests : (quota.tokens ?? 0) - u.tokens;
}

const coverageApplies = (kind: TrafficKind, mode: CoverageMode) => kind === 'ui' || mode !== 'excluded';
/** API-key traffic in `included` mode: the subscription only, never credits. */
const subscriptionOnly = (kind: TrafficKind, mode: CoverageMode) => kind === 'key' && mode === 'included';

export interface RateInput {
  kind: TrafficKind;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** When the request happened (decides whether the subscription period covers it). */
  at: string;
}

export interface Rating {
  /** The request at list price (micro-credits): what an API key's quota counts. */
  cost: number;
  /** What is taken from the user's credits. */
  charge: number;
  coverage: 'none' | 'partial' | 'full';
  /** The subscription quota drawn on, and its use after this request. */
  quota: { index: number; used: QuotaUse } | null;
}

/** Rates one billable request. Deterministic: same inputs, same result (the projection and the live view agree). */
export function rate(input: RateInput, price: Price, mode: CoverageMode, sub: SubscriptionSnapshot | undefined): Rating {
  const { prompt_tokens: prompt, completion_tokens: completion } = input;
  const total = prompt + completion;
  const cost = chargeMicro(price, prompt, completion);
  const uncovered: Rating = { cost, charge: cost, coverage: 'none', quota: null };
  if (!isActiveAt(sub, input.at) || !coverageApplies(input.kind, mode)) return uncovered;
  const index = quotaIndexFor(sub.quotas, input.model);
  if (index < 0) return uncovered;
  const quota = sub.quotas[index]!;
  const used = sub.used[index] ?? { requests: 0, tokens: 0 };
  const strict = subscriptionOnly(input.kind, mode);

  if (quota.requests !== null) {
    if (used.requests >= quota.requests && !strict) return uncovered;
    return { cost, charge: 0, coverage: 'full', quota: { index, used: { requests: used.requests + 1, tokens: used.tokens + total } } };
  }
  const remaining = Math.max(0, (quota.tokens ?? 0) - used.tokens);
  if (remaining === 0 && !strict) return uncovered;
  // Tokens are covered prompt first, then completion; the uncovered rest is charged at the token
  // prices (the per-request price is waived for a request the subscription partly covers).
  const covered = strict ? total : Math.min(total, remaining);
  const coveredPrompt = Math.min(prompt, covered);
  const coveredCompletion = covered - coveredPrompt;
  const charge = covered === total ? 0 : chargeMicro(price, prompt - coveredPrompt, completion - coveredCompletion, false);
  return { cost, charge, coverage: charge === 0 ? 'full' : 'partial', quota: { index, used: { requests: used.requests + 1, tokens: used.tokens + covered } } };
}

export type Admission = { ok: true } | { ok: false; message: string };

export interface AdmissionInput {
  kind: TrafficKind;
  model: string;
  /** Epoch ms. */
  now: number;
}

/**
 * Whether a request may start (hot path, before any upstream call): covered by the subscription,
 * free, or the user has credits left (> 0). A balance can go below zero by what requests already
 * in flight cost; the next request is then refused.
 */
export function admission(input: AdmissionInput, price: Price, mode: CoverageMode, sub: SubscriptionSnapshot | undefined, balanceMicro: number): Admission {
  const active = isActiveAt(sub, input.now);
  if (active && coverageApplies(input.kind, mode)) {
    const index = quotaIndexFor(sub.quotas, input.model);
    if (index >= 0) {
      if (remainingOf(sub.quotas[index]!, sub.used[index]) > 0) return { ok: true };
      if (subscriptionOnly(input.kind, mode)) {
        return { ok: false, message: `the subscription's quota for ${input.model} is used up until ${sub.period_end}; relay API usage is covered by the subscription only (subscription_covers_relay: included), credits are not used` };
      }
    }
  }
  if (isFree(price) || balanceMicro > 0) return { ok: true };
  const balance = `${formatCredits(balanceMicro)} credits`;
  if (active && input.kind === 'key' && mode === 'excluded') {
    return { ok: false, message: `the subscription does not cover relay API usage (subscription_covers_relay: excluded); credits are needed, and the balance is ${balance}` };
  }
  if (active) return { ok: false, message: `the subscription does not cover this request for ${input.model} (quota used up or model not in the plan) and the credit balance is ${balance}; top up credits` };
  return { ok: false, message: `insufficient credits: the balance is ${balance} and no subscription covers ${input.model}; top up credits or subscribe to a plan` };
}

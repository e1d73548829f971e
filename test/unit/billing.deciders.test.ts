/** Given / when / then over the billing deciders: pricing, credits, plans, subscriptions, settings. */
import { describe, expect, it } from 'vitest';
import { credits } from '../../src/commands/credits/decider.js';
import { plans } from '../../src/commands/plans/decider.js';
import type { PlanTerms } from '../../src/commands/plans/events.js';
import { pricing } from '../../src/commands/pricing/decider.js';
import type { PricingEvent } from '../../src/commands/pricing/events.js';
import { settings } from '../../src/commands/settings/decider.js';
import { subscriptions } from '../../src/commands/subscriptions/decider.js';
import type { SubscriptionEvent } from '../../src/commands/subscriptions/events.js';
import { DeciderSpec } from '../support/decider-spec.js';
import { DEFAULT_RELAY_SETTINGS } from '../../src/billing/rating.js';

const P = (i: number, o: number, r = 0) => ({ input_per_1m_micro: i, output_per_1m_micro: o, per_request_micro: r });

describe('pricing decider', () => {
  const spec = DeciderSpec.for(pricing);

  it('sets a model price, and decides nothing when it is unchanged', () => {
    spec.given([]).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 3), by: 'a' }).then([
      { type: 'ModelPriceSet', data: { model: 'gpt', input_per_1m_micro: 1, output_per_1m_micro: 2, per_request_micro: 3, by: 'a' } },
    ]);
    const history: PricingEvent[] = [{ type: 'ModelPriceSet', data: { model: 'gpt', ...P(1, 2, 3), by: null } }];
    spec.given(history).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 3), by: 'a' }).thenNothingHappened();
    spec.given(history).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 4), by: 'a' }).then([{ type: 'ModelPriceSet', data: { model: 'gpt', ...P(1, 2, 4), by: 'a' } }]);
  });

  it('removes only a price that exists', () => {
    spec.given([]).when({ type: 'RemoveModelPrice', model: 'gpt', by: null }).thenThrows(expect.objectContaining({ status: 404, code: 'price_not_found' }));
    const history: PricingEvent[] = [{ type: 'ModelPriceSet', data: { model: 'gpt', ...P(1, 2), by: null } }];
    spec.given(history).when({ type: 'RemoveModelPrice', model: 'gpt', by: null }).then([{ type: 'ModelPriceRemoved', data: { model: 'gpt', by: null } }]);
    expect(spec.given([...history, { type: 'ModelPriceRemoved', data: { model: 'gpt', by: null } }]).state.models).toEqual({});
  });

  it('sets the default and several prices at once, skipping what is unchanged', () => {
    const history: PricingEvent[] = [{ type: 'ModelPriceSet', data: { model: 'a', ...P(1, 1), by: null } }];
    spec.given(history).when({ type: 'SetPrices', default: P(5, 5), models: { a: P(1, 1), b: P(2, 2) }, by: 'x' }).then([
      { type: 'DefaultPriceSet', data: { ...P(5, 5), by: 'x' } },
      { type: 'ModelPriceSet', data: { model: 'b', ...P(2, 2), by: 'x' } },
    ]);
  });
});

describe('credits decider', () => {
  const spec = DeciderSpec.for(credits);

  it('tops up positive amounts with a trimmed reason', () => {
    spec.given([]).when({ type: 'TopUpCredits', userId: 'u', amountMicro: 5, reason: ' gift ', by: 'a' }).then([{ type: 'CreditsToppedUp', data: { user_id: 'u', amount_micro: 5, reason: 'gift', by: 'a' } }]);
    for (const amountMicro of [0, -1]) {
      spec.given([]).when({ type: 'TopUpCredits', userId: 'u', amountMicro, reason: 'x', by: null }).thenThrows(expect.objectContaining({ code: 'invalid_amount' }));
    }
  });

  it('adjusts by a signed, non-zero amount; a reason is required', () => {
    spec.given([]).when({ type: 'AdjustCredits', userId: 'u', amountMicro: -7, reason: 'refund reversal', by: null }).then([
      { type: 'CreditsAdjusted', data: { user_id: 'u', amount_micro: -7, reason: 'refund reversal', by: null } },
    ]);
    spec.given([]).when({ type: 'AdjustCredits', userId: 'u', amountMicro: 0, reason: 'x', by: null }).thenThrows(expect.objectContaining({ code: 'invalid_amount' }));
    spec.given([]).when({ type: 'AdjustCredits', userId: 'u', amountMicro: 3, reason: '   ', by: null }).thenThrows(expect.objectContaining({ code: 'reason_required' }));
  });
});

const quota = { models: ['m'], requests: 10, tokens: null };

describe('plans decider', () => {
  const spec = DeciderSpec.for(plans);
  const created = { type: 'PlanCreated' as const, data: { plan_id: 'p', name: 'Pro', description: null, period: 'month' as const, quotas: [quota], price_micro: 5, by: null } };

  it('creates a plan; a quota has exactly one of requests or tokens', () => {
    spec.given([]).when({ type: 'CreatePlan', planId: 'p', name: 'Pro', description: null, period: 'month', quotas: [quota], priceMicro: 5, by: null }).then([created]);
    spec
      .given([])
      .when({ type: 'CreatePlan', planId: 'p', name: 'x', description: null, period: 'day', quotas: [{ models: ['m'], requests: 1, tokens: 1 }], priceMicro: 0, by: null })
      .thenThrows(expect.objectContaining({ code: 'invalid_quota' }));
    spec.given([created]).when({ type: 'CreatePlan', planId: 'p', name: 'x', description: null, period: 'day', quotas: [], priceMicro: 0, by: null }).thenThrows(expect.objectContaining({ code: 'plan_exists' }));
  });

  it('updates only what changed, and deleted plans are gone', () => {
    spec.given([created]).when({ type: 'UpdatePlan', name: 'Pro', priceMicro: 7, by: 'a' }).then([{ type: 'PlanUpdated', data: { price_micro: 7, by: 'a' } }]);
    spec.given([created]).when({ type: 'UpdatePlan', name: 'Pro', by: 'a' }).thenNothingHappened();
    const deleted = [created, { type: 'PlanDeleted' as const, data: { by: null } }];
    spec.given(deleted).when({ type: 'UpdatePlan', name: 'x', by: null }).thenThrows(expect.objectContaining({ status: 404, code: 'plan_not_found' }));
    spec.given(deleted).when({ type: 'DeletePlan', by: null }).thenThrows(expect.objectContaining({ code: 'plan_not_found' }));
  });
});

describe('subscriptions decider', () => {
  const spec = DeciderSpec.for(subscriptions);
  const terms: PlanTerms = { plan_id: 'p', plan_name: 'Pro', period: 'month', quotas: [quota], price_micro: 5 };
  const startedAt = (subscriptionId: string, start: string, end: string): SubscriptionEvent => ({
    type: 'SubscriptionStarted',
    data: { subscription_id: subscriptionId, user_id: 'u', terms, period_start: start, period_end: end, by: 'u' },
  });
  const started = startedAt('s1', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');

  it('subscribes for one period from now', () => {
    spec.given([]).when({ type: 'Subscribe', subscriptionId: 's1', userId: 'u', terms, now: '2026-11-01T00:00:00.000Z', by: 'u' }).then([started]);
  });

  it('refuses a second subscription while one runs, but not after it ended or was canceled', () => {
    const during = { type: 'Subscribe' as const, subscriptionId: 's2', userId: 'u', terms, now: '2026-11-15T00:00:00.000Z', by: 'u' };
    spec.given([started]).when(during).thenThrows(expect.objectContaining({ status: 409, code: 'already_subscribed' }));
    spec.given([started]).when({ ...during, now: '2026-12-01T00:00:00.000Z' }).then([startedAt('s2', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z')]);
    const canceled: SubscriptionEvent[] = [started, { type: 'SubscriptionCanceled', data: { subscription_id: 's1', user_id: 'u', at: '2026-11-02T00:00:00.000Z', by: 'u' } }];
    spec.given(canceled).when(during).then([startedAt('s2', '2026-11-15T00:00:00.000Z', '2026-12-15T00:00:00.000Z')]);
  });

  it('renews into a new period from now; cancels only a running subscription', () => {
    spec.given([started]).when({ type: 'RenewSubscription', userId: 'u', terms, now: '2026-12-03T00:00:00.000Z', by: 'u' }).then([
      { type: 'SubscriptionRenewed', data: { subscription_id: 's1', user_id: 'u', terms, period_start: '2026-12-03T00:00:00.000Z', period_end: '2027-01-03T00:00:00.000Z', by: 'u' } },
    ]);
    spec.given([]).when({ type: 'RenewSubscription', userId: 'u', terms, now: '2026-12-03T00:00:00.000Z', by: 'u' }).thenThrows(expect.objectContaining({ code: 'subscription_not_found' }));
    spec.given([started]).when({ type: 'CancelSubscription', userId: 'u', now: '2026-11-05T00:00:00.000Z', by: 'u' }).then([
      { type: 'SubscriptionCanceled', data: { subscription_id: 's1', user_id: 'u', at: '2026-11-05T00:00:00.000Z', by: 'u' } },
    ]);
    spec.given([started]).when({ type: 'CancelSubscription', userId: 'u', now: '2026-12-05T00:00:00.000Z', by: 'u' }).thenThrows(expect.objectContaining({ code: 'subscription_not_active' }));
  });
});

describe('settings decider', () => {
  const spec = DeciderSpec.for(settings);

  it('starts from the defaults and records only changes', () => {
    expect(settings.initialState).toEqual({ relay_api_enabled: true, subscription_covers_relay: 'hybrid', relay_settings: DEFAULT_RELAY_SETTINGS, storage_quota_bytes: null });
    spec.given([]).when({ type: 'ChangeSettings', relay_api_enabled: true, subscription_covers_relay: 'hybrid', by: 'a' }).thenNothingHappened();
    spec.given([]).when({ type: 'ChangeSettings', relay_api_enabled: false, subscription_covers_relay: 'hybrid', by: 'a' }).then([{ type: 'TenantSettingsChanged', data: { relay_api_enabled: false, by: 'a' } }]);
    expect(spec.given([{ type: 'TenantSettingsChanged', data: { subscription_covers_relay: 'excluded', by: null } }]).state).toEqual({
      relay_api_enabled: true,
      subscription_covers_relay: 'excluded',
      relay_settings: DEFAULT_RELAY_SETTINGS,
      storage_quota_bytes: null,
    });
  });

  it('records a storage quota that changes, and null (unlimited) again', () => {
    const limited = { type: 'TenantSettingsChanged' as const, data: { storage_quota_bytes: 1000, by: 'a' } };
    spec.given([]).when({ type: 'ChangeSettings', storage_quota_bytes: null, by: 'a' }).thenNothingHappened();
    spec.given([]).when({ type: 'ChangeSettings', storage_quota_bytes: 1000, by: 'a' }).then([limited]);
    spec.given([limited]).when({ type: 'ChangeSettings', storage_quota_bytes: 1000, by: 'a' }).thenNothingHappened();
    spec.given([limited]).when({ type: 'ChangeSettings', storage_quota_bytes: null, by: 'b' }).then([{ type: 'TenantSettingsChanged', data: { storage_quota_bytes: null, by: 'b' } }]);
    expect(spec.given([limited]).state.storage_quota_bytes).toBe(1000);
  });

  it('records only the relay settings that change, and folds them over the earlier ones', () => {
    const first = { type: 'TenantSettingsChanged' as const, data: { relay_settings: { default_provider: 'anthropic', fallback_providers: ['openai'] }, by: 'a' } };
    spec.given([]).when({ type: 'ChangeSettings', relay_settings: { default_provider: 'anthropic', fallback_providers: ['openai'], rate_limiting: true }, by: 'a' }).then([first]);
    spec.given([first]).when({ type: 'ChangeSettings', relay_settings: { default_provider: 'anthropic', fallback_providers: ['openai'] }, by: 'a' }).thenNothingHappened();
    spec.given([first]).when({ type: 'ChangeSettings', relay_settings: { fallback_providers: ['openai', 'gemini'], usage_tracking: false }, by: 'b' }).then([
      { type: 'TenantSettingsChanged', data: { relay_settings: { fallback_providers: ['openai', 'gemini'], usage_tracking: false }, by: 'b' } },
    ]);
    const cleared = { type: 'TenantSettingsChanged' as const, data: { relay_settings: { default_provider: null, error_logging: false }, by: 'a' } };
    expect(spec.given([first, cleared]).state.relay_settings).toEqual({ ...DEFAULT_RELAY_SETTINGS, fallback_providers: ['openai'], error_logging: false });
  });
});

/** Given / when / then over the billing deciders: pricing, credits, plans, subscriptions, settings. */
import { describe, expect, it } from 'vitest';
import { credits } from '../../src/commands/credits/decider.js';
import type { Decider, DomainEvent } from '../../src/commands/decider.js';
import { plans } from '../../src/commands/plans/decider.js';
import type { PlanTerms } from '../../src/commands/plans/events.js';
import { pricing } from '../../src/commands/pricing/decider.js';
import { settings } from '../../src/commands/settings/decider.js';
import { subscriptions } from '../../src/commands/subscriptions/decider.js';

function given<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, history: E[]) {
  const state = history.reduce(decider.evolve, decider.initialState);
  return { when: (command: C) => decider.decide(command, state), state };
}

const P = (i: number, o: number, r = 0) => ({ input_per_1m_micro: i, output_per_1m_micro: o, per_request_micro: r });

describe('pricing decider', () => {
  it('sets a model price, and decides nothing when it is unchanged', () => {
    expect(given(pricing, []).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 3), by: 'a' })).toEqual([
      { type: 'ModelPriceSet', data: { model: 'gpt', input_per_1m_micro: 1, output_per_1m_micro: 2, per_request_micro: 3, by: 'a' } },
    ]);
    const history = [{ type: 'ModelPriceSet' as const, data: { model: 'gpt', ...P(1, 2, 3), by: null } }];
    expect(given(pricing, history).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 3), by: 'a' })).toEqual([]);
    expect(given(pricing, history).when({ type: 'SetModelPrice', model: 'gpt', price: P(1, 2, 4), by: 'a' })).toHaveLength(1);
  });

  it('removes only a price that exists', () => {
    expect(() => given(pricing, []).when({ type: 'RemoveModelPrice', model: 'gpt', by: null })).toThrowError(expect.objectContaining({ status: 404, code: 'price_not_found' }));
    const history = [{ type: 'ModelPriceSet' as const, data: { model: 'gpt', ...P(1, 2), by: null } }];
    expect(given(pricing, history).when({ type: 'RemoveModelPrice', model: 'gpt', by: null })).toEqual([{ type: 'ModelPriceRemoved', data: { model: 'gpt', by: null } }]);
    const removed = given(pricing, [...history, { type: 'ModelPriceRemoved', data: { model: 'gpt', by: null } }]);
    expect(removed.state.models).toEqual({});
  });

  it('sets the default and several prices at once, skipping what is unchanged', () => {
    const history = [{ type: 'ModelPriceSet' as const, data: { model: 'a', ...P(1, 1), by: null } }];
    expect(given(pricing, history).when({ type: 'SetPrices', default: P(5, 5), models: { a: P(1, 1), b: P(2, 2) }, by: 'x' })).toEqual([
      { type: 'DefaultPriceSet', data: { ...P(5, 5), by: 'x' } },
      { type: 'ModelPriceSet', data: { model: 'b', ...P(2, 2), by: 'x' } },
    ]);
  });
});

describe('credits decider', () => {
  it('tops up positive amounts with a trimmed reason', () => {
    expect(given(credits, []).when({ type: 'TopUpCredits', userId: 'u', amountMicro: 5, reason: ' gift ', by: 'a' })).toEqual([
      { type: 'CreditsToppedUp', data: { user_id: 'u', amount_micro: 5, reason: 'gift', by: 'a' } },
    ]);
    for (const amountMicro of [0, -1]) {
      expect(() => given(credits, []).when({ type: 'TopUpCredits', userId: 'u', amountMicro, reason: 'x', by: null })).toThrowError(expect.objectContaining({ code: 'invalid_amount' }));
    }
  });

  it('adjusts by a signed, non-zero amount; a reason is required', () => {
    expect(given(credits, []).when({ type: 'AdjustCredits', userId: 'u', amountMicro: -7, reason: 'refund reversal', by: null })).toEqual([
      { type: 'CreditsAdjusted', data: { user_id: 'u', amount_micro: -7, reason: 'refund reversal', by: null } },
    ]);
    expect(() => given(credits, []).when({ type: 'AdjustCredits', userId: 'u', amountMicro: 0, reason: 'x', by: null })).toThrowError(expect.objectContaining({ code: 'invalid_amount' }));
    expect(() => given(credits, []).when({ type: 'AdjustCredits', userId: 'u', amountMicro: 3, reason: '   ', by: null })).toThrowError(expect.objectContaining({ code: 'reason_required' }));
  });
});

const quota = { models: ['m'], requests: 10, tokens: null };

describe('plans decider', () => {
  const created = { type: 'PlanCreated' as const, data: { plan_id: 'p', name: 'Pro', description: null, period: 'month' as const, quotas: [quota], price_micro: 5, by: null } };

  it('creates a plan; a quota has exactly one of requests or tokens', () => {
    expect(given(plans, []).when({ type: 'CreatePlan', planId: 'p', name: 'Pro', description: null, period: 'month', quotas: [quota], priceMicro: 5, by: null })).toEqual([created]);
    expect(() => given(plans, []).when({ type: 'CreatePlan', planId: 'p', name: 'x', description: null, period: 'day', quotas: [{ models: ['m'], requests: 1, tokens: 1 }], priceMicro: 0, by: null })).toThrowError(
      expect.objectContaining({ code: 'invalid_quota' }),
    );
    expect(() => given(plans, [created]).when({ type: 'CreatePlan', planId: 'p', name: 'x', description: null, period: 'day', quotas: [], priceMicro: 0, by: null })).toThrowError(expect.objectContaining({ code: 'plan_exists' }));
  });

  it('updates only what changed, and deleted plans are gone', () => {
    expect(given(plans, [created]).when({ type: 'UpdatePlan', name: 'Pro', priceMicro: 7, by: 'a' })).toEqual([{ type: 'PlanUpdated', data: { price_micro: 7, by: 'a' } }]);
    expect(given(plans, [created]).when({ type: 'UpdatePlan', name: 'Pro', by: 'a' })).toEqual([]);
    const deleted = [created, { type: 'PlanDeleted' as const, data: { by: null } }];
    expect(() => given(plans, deleted).when({ type: 'UpdatePlan', name: 'x', by: null })).toThrowError(expect.objectContaining({ status: 404, code: 'plan_not_found' }));
    expect(() => given(plans, deleted).when({ type: 'DeletePlan', by: null })).toThrowError(expect.objectContaining({ code: 'plan_not_found' }));
  });
});

describe('subscriptions decider', () => {
  const terms: PlanTerms = { plan_id: 'p', plan_name: 'Pro', period: 'month', quotas: [quota], price_micro: 5 };
  const started = { type: 'SubscriptionStarted' as const, data: { subscription_id: 's1', user_id: 'u', terms, period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z', by: 'u' } };

  it('subscribes for one period from now', () => {
    expect(given(subscriptions, []).when({ type: 'Subscribe', subscriptionId: 's1', userId: 'u', terms, now: '2026-11-01T00:00:00.000Z', by: 'u' })).toEqual([started]);
  });

  it('refuses a second subscription while one runs, but not after it ended or was canceled', () => {
    const during = { type: 'Subscribe' as const, subscriptionId: 's2', userId: 'u', terms, now: '2026-11-15T00:00:00.000Z', by: 'u' };
    expect(() => given(subscriptions, [started]).when(during)).toThrowError(expect.objectContaining({ status: 409, code: 'already_subscribed' }));
    expect(given(subscriptions, [started]).when({ ...during, now: '2026-12-01T00:00:00.000Z' })[0]).toMatchObject({ type: 'SubscriptionStarted', data: { subscription_id: 's2' } });
    const canceled = [started, { type: 'SubscriptionCanceled' as const, data: { subscription_id: 's1', user_id: 'u', at: '2026-11-02T00:00:00.000Z', by: 'u' } }];
    expect(given(subscriptions, canceled).when(during)).toHaveLength(1);
  });

  it('renews into a new period from now; cancels only a running subscription', () => {
    expect(given(subscriptions, [started]).when({ type: 'RenewSubscription', userId: 'u', terms, now: '2026-12-03T00:00:00.000Z', by: 'u' })).toEqual([
      { type: 'SubscriptionRenewed', data: { subscription_id: 's1', user_id: 'u', terms, period_start: '2026-12-03T00:00:00.000Z', period_end: '2027-01-03T00:00:00.000Z', by: 'u' } },
    ]);
    expect(() => given(subscriptions, []).when({ type: 'RenewSubscription', userId: 'u', terms, now: '2026-12-03T00:00:00.000Z', by: 'u' })).toThrowError(expect.objectContaining({ code: 'subscription_not_found' }));
    expect(given(subscriptions, [started]).when({ type: 'CancelSubscription', userId: 'u', now: '2026-11-05T00:00:00.000Z', by: 'u' })).toEqual([
      { type: 'SubscriptionCanceled', data: { subscription_id: 's1', user_id: 'u', at: '2026-11-05T00:00:00.000Z', by: 'u' } },
    ]);
    expect(() => given(subscriptions, [started]).when({ type: 'CancelSubscription', userId: 'u', now: '2026-12-05T00:00:00.000Z', by: 'u' })).toThrowError(expect.objectContaining({ code: 'subscription_not_active' }));
  });
});

describe('settings decider', () => {
  it('starts from the defaults and records only changes', () => {
    expect(settings.initialState).toEqual({ relay_api_enabled: true, subscription_covers_relay: 'hybrid' });
    expect(given(settings, []).when({ type: 'ChangeSettings', relay_api_enabled: true, subscription_covers_relay: 'hybrid', by: 'a' })).toEqual([]);
    expect(given(settings, []).when({ type: 'ChangeSettings', relay_api_enabled: false, subscription_covers_relay: 'hybrid', by: 'a' })).toEqual([
      { type: 'TenantSettingsChanged', data: { relay_api_enabled: false, by: 'a' } },
    ]);
    const state = given(settings, [{ type: 'TenantSettingsChanged', data: { subscription_covers_relay: 'excluded', by: null } }]).state;
    expect(state).toEqual({ relay_api_enabled: true, subscription_covers_relay: 'excluded' });
  });
});

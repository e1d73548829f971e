/** The billing rules: coverage modes, partial coverage, admission, billable requests, periods. */
import { describe, expect, it } from 'vitest';
import type { Price } from '../../src/billing/pricing.js';
import { admission, isBillable, periodEnd, quotaIndexFor, rate, type CoverageMode, type RateInput, type SubscriptionSnapshot } from '../../src/billing/rating.js';

// 1 credit per 1M prompt tokens, 2 per 1M completion tokens, 0.0001 per request (100 micro).
const PRICE: Price = { input_per_1m_micro: 1_000_000, output_per_1m_micro: 2_000_000, per_request_micro: 100 };
const FREE_PRICE: Price = { input_per_1m_micro: 0, output_per_1m_micro: 0, per_request_micro: 0 };
const AT = '2026-11-10T12:00:00.000Z';
const NOW = Date.parse(AT);

function sub(quota: { requests?: number; tokens?: number; models?: string[] }, used = { requests: 0, tokens: 0 }, status: 'active' | 'canceled' = 'active'): SubscriptionSnapshot {
  return {
    status,
    period_start: '2026-11-01T00:00:00.000Z',
    period_end: '2026-12-01T00:00:00.000Z',
    canceled_at: status === 'canceled' ? '2026-11-05T00:00:00.000Z' : null,
    quotas: [{ models: quota.models ?? ['m'], requests: quota.requests ?? null, tokens: quota.tokens ?? null }],
    used: [used],
  };
}
const input = (kind: 'key' | 'ui', prompt = 11, completion = 7, model = 'm'): RateInput => ({ kind, model, prompt_tokens: prompt, completion_tokens: completion, at: AT });
// 11 × 1 + 7 × 2 = 25 micro for the tokens, + 100 per request.
const COST = 125;

describe('rate', () => {
  it('charges the full cost without a subscription, in every mode and for both kinds', () => {
    for (const mode of ['included', 'excluded', 'hybrid'] as CoverageMode[]) {
      for (const kind of ['key', 'ui'] as const) expect(rate(input(kind), PRICE, mode, undefined)).toEqual({ cost: COST, charge: COST, coverage: 'none', quota: null });
    }
  });

  it('covers with a request quota while it lasts (hybrid), then charges the overage', () => {
    expect(rate(input('key'), PRICE, 'hybrid', sub({ requests: 2 }, { requests: 1, tokens: 18 }))).toEqual({ cost: COST, charge: 0, coverage: 'full', quota: { index: 0, used: { requests: 2, tokens: 36 } } });
    expect(rate(input('key'), PRICE, 'hybrid', sub({ requests: 2 }, { requests: 2, tokens: 36 }))).toMatchObject({ charge: COST, coverage: 'none', quota: null });
  });

  it('covers tokens prompt first, charges the uncovered rest without the per-request price', () => {
    // 20 tokens left: all 18 (11 prompt + 7 completion) fit.
    expect(rate(input('ui'), PRICE, 'hybrid', sub({ tokens: 20 }))).toMatchObject({ charge: 0, coverage: 'full', quota: { index: 0, used: { requests: 1, tokens: 18 } } });
    // 13 left: 11 prompt + 2 completion covered, 5 completion tokens charged at 2/1M = 10 micro.
    expect(rate(input('ui'), PRICE, 'hybrid', sub({ tokens: 100 }, { requests: 5, tokens: 87 }))).toEqual({ cost: COST, charge: 10, coverage: 'partial', quota: { index: 0, used: { requests: 6, tokens: 100 } } });
    // 5 left: 5 prompt covered; 6 prompt + 7 completion charged = 6 + 14 = 20.
    expect(rate(input('ui'), PRICE, 'hybrid', sub({ tokens: 100 }, { requests: 5, tokens: 95 }))).toMatchObject({ charge: 20, coverage: 'partial' });
  });

  it('excluded: API-key traffic is always charged and never touches the subscription; the UI still uses it', () => {
    expect(rate(input('key'), PRICE, 'excluded', sub({ requests: 10 }))).toEqual({ cost: COST, charge: COST, coverage: 'none', quota: null });
    expect(rate(input('ui'), PRICE, 'excluded', sub({ requests: 10 }))).toMatchObject({ charge: 0, coverage: 'full' });
  });

  it('included: API-key traffic counts against the quota even past it, never charged; the UI falls back to credits', () => {
    expect(rate(input('key'), PRICE, 'included', sub({ requests: 1 }, { requests: 1, tokens: 0 }))).toMatchObject({ charge: 0, coverage: 'full', quota: { used: { requests: 2 } } });
    expect(rate(input('key'), PRICE, 'included', sub({ tokens: 10 }, { requests: 0, tokens: 10 }))).toMatchObject({ charge: 0, quota: { used: { tokens: 28 } } });
    expect(rate(input('ui'), PRICE, 'included', sub({ requests: 1 }, { requests: 1, tokens: 0 }))).toMatchObject({ charge: COST, coverage: 'none' });
  });

  it('charges models the plan has no quota for, and ignores canceled or ended subscriptions', () => {
    expect(rate(input('ui', 11, 7, 'other'), PRICE, 'hybrid', sub({ requests: 10 }))).toMatchObject({ charge: COST, coverage: 'none' });
    expect(rate(input('ui', 11, 7, 'other'), PRICE, 'hybrid', sub({ requests: 10, models: ['*'] }))).toMatchObject({ charge: 0 });
    expect(rate(input('ui'), PRICE, 'hybrid', sub({ requests: 10 }, undefined, 'canceled'))).toMatchObject({ charge: COST });
    // A request that started before the cancellation (its usage logged after it) is still covered.
    expect(rate({ ...input('ui'), at: '2026-11-04T00:00:00.000Z' }, PRICE, 'hybrid', sub({ requests: 10 }, undefined, 'canceled'))).toMatchObject({ charge: 0 });
    expect(rate({ ...input('ui'), at: '2026-12-01T00:00:00.000Z' }, PRICE, 'hybrid', sub({ requests: 10 }))).toMatchObject({ charge: COST });
  });

  it('prefers a quota naming the model over a wildcard', () => {
    expect(quotaIndexFor([{ models: ['*'], requests: 1, tokens: null }, { models: ['m'], requests: 1, tokens: null }], 'm')).toBe(1);
    expect(quotaIndexFor([{ models: ['*'], requests: 1, tokens: null }], 'x')).toBe(0);
    expect(quotaIndexFor([{ models: ['a', 'b'], requests: 1, tokens: null }], 'x')).toBe(-1);
  });

  it('bills nothing for requests that generated nothing', () => {
    expect(isBillable({ status: 503, total_tokens: 0 })).toBe(false);
    expect(isBillable({ status: 429, total_tokens: 0 })).toBe(false);
    expect(isBillable({ status: 499, total_tokens: 12 })).toBe(true);
    expect(isBillable({ status: 200, total_tokens: 0 })).toBe(true);
  });
});

describe('admission', () => {
  const key = { kind: 'key' as const, model: 'm', now: NOW };
  const ui = { kind: 'ui' as const, model: 'm', now: NOW };

  it('refuses a user with no credits and no coverage, admits with credits or for free models', () => {
    expect(admission(ui, PRICE, 'hybrid', undefined, 0)).toMatchObject({ ok: false, message: expect.stringContaining('insufficient credits') });
    expect(admission(ui, PRICE, 'hybrid', undefined, -5)).toMatchObject({ ok: false });
    expect(admission(ui, PRICE, 'hybrid', undefined, 1)).toEqual({ ok: true });
    expect(admission(ui, FREE_PRICE, 'hybrid', undefined, 0)).toEqual({ ok: true });
  });

  it('hybrid: coverage first, then credits', () => {
    expect(admission(key, PRICE, 'hybrid', sub({ requests: 1 }), 0)).toEqual({ ok: true });
    expect(admission(key, PRICE, 'hybrid', sub({ requests: 1 }, { requests: 1, tokens: 0 }), 0)).toMatchObject({ ok: false });
    expect(admission(key, PRICE, 'hybrid', sub({ requests: 1 }, { requests: 1, tokens: 0 }), 10)).toEqual({ ok: true });
  });

  it('included: an exhausted quota refuses API keys even with credits; the UI may use credits', () => {
    expect(admission(key, PRICE, 'included', sub({ requests: 1 }), 0)).toEqual({ ok: true });
    expect(admission(key, PRICE, 'included', sub({ requests: 1 }, { requests: 1, tokens: 0 }), 1_000_000)).toMatchObject({ ok: false, message: expect.stringContaining('used up') });
    expect(admission(ui, PRICE, 'included', sub({ requests: 1 }, { requests: 1, tokens: 0 }), 1_000_000)).toEqual({ ok: true });
  });

  it('excluded: a subscriber without credits is told the subscription does not cover relay API usage', () => {
    const refused = admission(key, PRICE, 'excluded', sub({ requests: 100 }), 0);
    expect(refused).toMatchObject({ ok: false });
    expect(!refused.ok && refused.message).toMatch(/subscription does not cover relay API usage.*credits are needed/);
    expect(admission(key, PRICE, 'excluded', sub({ requests: 100 }), 1)).toEqual({ ok: true });
    expect(admission(ui, PRICE, 'excluded', sub({ requests: 100 }), 0)).toEqual({ ok: true });
  });
});

describe('periods', () => {
  it('adds days, weeks and calendar months (clamped to the month end)', () => {
    expect(periodEnd('2026-11-10T12:00:00.000Z', 'day')).toBe('2026-11-11T12:00:00.000Z');
    expect(periodEnd('2026-11-10T12:00:00.000Z', 'week')).toBe('2026-11-17T12:00:00.000Z');
    expect(periodEnd('2026-11-10T12:00:00.000Z', { days: 30 })).toBe('2026-12-10T12:00:00.000Z');
    expect(periodEnd('2026-11-10T12:00:00.000Z', 'month')).toBe('2026-12-10T12:00:00.000Z');
    expect(periodEnd('2026-01-31T08:00:00.000Z', 'month')).toBe('2026-02-28T08:00:00.000Z');
    expect(periodEnd('2028-01-31T08:00:00.000Z', 'month')).toBe('2028-02-29T08:00:00.000Z');
    expect(periodEnd('2026-12-15T00:00:00.000Z', 'month')).toBe('2027-01-15T00:00:00.000Z');
  });
});

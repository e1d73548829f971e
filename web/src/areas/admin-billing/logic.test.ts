import { describe, expect, it } from 'vitest';
import { emptyPlanForm, FormError, ledgerQuery, pageOf, planBody, planToForm, thisMonth } from './logic';

describe('billing form logic', () => {
  it('turns the plan form into the API body, custom periods and quotas included', () => {
    const form = { ...emptyPlanForm(), name: ' Pro ', price: '9.5', period: 'days' as const, days: '10', quotas: [{ models: 'gpt-4o, gpt-4o-mini', unit: 'requests' as const, amount: '100' }, { models: '*', unit: 'tokens' as const, amount: '5000' }] };
    expect(planBody(form)).toEqual({
      name: 'Pro',
      description: null,
      period: { days: 10 },
      price: '9.5',
      quotas: [
        { models: ['gpt-4o', 'gpt-4o-mini'], requests: 100 },
        { models: ['*'], tokens: 5000 },
      ],
    });
    expect(planBody({ ...emptyPlanForm(), name: 'x', description: 'd' })).toMatchObject({ period: 'month', quotas: [], description: 'd' });
  });

  it('names the field that is wrong', () => {
    expect(() => planBody({ ...emptyPlanForm(), period: 'days', days: '0' })).toThrow(FormError);
    const bad = (amount: string, models = 'm') => {
      try {
        planBody({ ...emptyPlanForm(), quotas: [{ models, unit: 'tokens', amount }] });
        return null;
      } catch (e) {
        return (e as FormError).field;
      }
    };
    expect(bad('1.5')).toBe('quotas.0.amount');
    expect(bad('5', ' , ')).toBe('quotas.0.models');
  });

  it('reads a plan back into the form', () => {
    const plan = { id: 'p', name: 'Pro', description: null, period: { days: 7 }, price: '1.000000', deleted: false, quotas: [{ models: ['a', 'b'], requests: null, tokens: 9 }] };
    expect(planToForm(plan)).toEqual({ name: 'Pro', description: '', period: 'days', days: '7', price: '1.000000', quotas: [{ models: 'a, b', unit: 'tokens', amount: '9' }] });
    expect(planBody(planToForm(plan))).toEqual({ name: 'Pro', description: null, period: { days: 7 }, price: '1.000000', quotas: [{ models: ['a', 'b'], tokens: 9 }] });
  });

  it('builds the ledger query with an inclusive end date', () => {
    expect(ledgerQuery({ user_id: '', type: '', from: '', to: '' })).toEqual({});
    expect(ledgerQuery({ user_id: 'u1', type: 'topup', from: '2026-11-01', to: '2026-11-30' })).toEqual({ user_id: 'u1', type: 'topup', from: '2026-11-01', to: '2026-12-01' });
  });

  it('pages a list and clamps the page', () => {
    const items = Array.from({ length: 7 }, (_, i) => i);
    expect(pageOf(items, 2, 3)).toEqual({ items: [3, 4, 5], page: 2, pages: 3 });
    expect(pageOf(items, 9, 3)).toEqual({ items: [6], page: 3, pages: 3 });
    expect(pageOf([], 1, 3)).toEqual({ items: [], page: 1, pages: 1 });
    expect(thisMonth(new Date('2026-11-28T10:00:00Z'))).toBe('2026-11');
  });
});

/** Billing pages' pure logic: the plan form <-> the API's plan, ledger filters -> query, paging. */

export type Period = 'day' | 'week' | 'month' | { days: number };

export interface PlanQuota {
  models: string[];
  requests: number | null;
  tokens: number | null;
}

export interface Plan {
  id: string;
  name: string;
  description: string | null;
  period: Period;
  quotas: PlanQuota[];
  price: string;
  deleted: boolean;
}

export interface QuotaRow {
  models: string;
  unit: 'requests' | 'tokens';
  amount: string;
}

export interface PlanForm {
  name: string;
  description: string;
  period: 'day' | 'week' | 'month' | 'days';
  days: string;
  price: string;
  quotas: QuotaRow[];
}

export const emptyPlanForm = (): PlanForm => ({ name: '', description: '', period: 'month', days: '30', price: '0', quotas: [] });

export function planToForm(plan: Plan): PlanForm {
  const custom = typeof plan.period === 'object';
  return {
    name: plan.name,
    description: plan.description ?? '',
    period: typeof plan.period === 'object' ? 'days' : plan.period,
    days: custom ? String((plan.period as { days: number }).days) : '30',
    price: plan.price,
    quotas: plan.quotas.map((q) => ({ models: q.models.join(', '), unit: q.requests !== null ? 'requests' : 'tokens', amount: String(q.requests ?? q.tokens ?? '') })),
  };
}

/** Thrown for input the form can tell is wrong before asking the server; `field` names it. */
export class FormError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const wholePositive = (text: string): number | null => (/^\d+$/.test(text.trim()) && Number(text) > 0 ? Number(text) : null);

/** The plan body the API takes (POST /v1/admin/plans, PATCH with the same fields). */
export function planBody(form: PlanForm) {
  let period: Period;
  if (form.period === 'days') {
    const days = wholePositive(form.days);
    if (days === null) throw new FormError('days', 'days');
    period = { days };
  } else period = form.period;
  const quotas = form.quotas.map((row, i) => {
    const models = row.models
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    const amount = wholePositive(row.amount);
    if (models.length === 0) throw new FormError(`quotas.${i}.models`, 'models');
    if (amount === null) throw new FormError(`quotas.${i}.amount`, 'amount');
    return row.unit === 'requests' ? { models, requests: amount } : { models, tokens: amount };
  });
  return { name: form.name.trim(), description: form.description.trim() === '' ? null : form.description.trim(), period, quotas, price: form.price.trim() };
}

export interface LedgerFilters {
  user_id: string;
  type: string;
  /** YYYY-MM-DD (date inputs), inclusive both ends. */
  from: string;
  to: string;
}

/** The ledger's query: dates from date inputs, `to` made exclusive (the day after) as the API counts it. */
export function ledgerQuery(f: LedgerFilters): Record<string, string> {
  const q: Record<string, string> = {};
  if (f.user_id) q.user_id = f.user_id;
  if (f.type) q.type = f.type;
  if (f.from) q.from = f.from;
  if (f.to) {
    const next = new Date(`${f.to}T00:00:00Z`);
    if (!Number.isNaN(next.getTime())) {
      next.setUTCDate(next.getUTCDate() + 1);
      q.to = next.toISOString().slice(0, 10);
    }
  }
  return q;
}

/** One page of a list (1-based), with the page count (at least 1). */
export function pageOf<T>(items: readonly T[], page: number, size: number): { items: T[]; page: number; pages: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const p = Math.min(Math.max(1, page), pages);
  return { items: items.slice((p - 1) * size, p * size), page: p, pages };
}

/** The current calendar month (UTC), as statements name it: YYYY-MM. */
export const thisMonth = (now = new Date()): string => now.toISOString().slice(0, 7);

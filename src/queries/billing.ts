/**
 * Reads of the billing read models (never the log): price tables, balances, the ledger (JSON or
 * CSV), statements per calendar month, plans and subscriptions.
 */
import type { BillingLedgerTable, BillingPlansTable, BillingSubscriptionsTable } from '../adapters/sql/schema.js';
import type { PlanQuota, PlanTerms } from '../commands/plans/events.js';
import { DEFAULT_PRICE_MODEL, priceOfRow, settingsOfRow, type LedgerEntryType } from '../projections/billing/rows.js';
import type { ReadModelDb } from '../projections/runtime/projection.js';
import { formatCredits } from '../billing/money.js';
import type { Price } from '../billing/pricing.js';
import { remainingOf, type Period, type QuotaUse, type Settings } from '../billing/rating.js';

const n = (v: number | string | bigint | null | undefined) => (v === null || v === undefined ? 0 : Number(v));

export function priceView(price: Price) {
  return {
    input_price: formatCredits(price.input_per_1m_micro),
    output_price: formatCredits(price.output_per_1m_micro),
    per_request_price: formatCredits(price.per_request_micro),
    ...price,
  };
}

export async function loadPricing(db: ReadModelDb, tenantId: string) {
  const rows = await db.selectFrom('billing_prices').selectAll().where('tenant_id', '=', tenantId).orderBy('model').execute();
  const def = rows.find((r) => r.model === DEFAULT_PRICE_MODEL);
  return {
    object: 'pricing' as const,
    tenant_id: tenantId,
    unit: 'credits per 1M tokens (input/output), credits per request (per_request)',
    default: { ...priceView(def ? priceOfRow(def) : { input_per_1m_micro: 0, output_per_1m_micro: 0, per_request_micro: 0 }), updated_at: def?.updated_at ?? null, updated_by: def?.updated_by ?? null },
    models: rows.filter((r) => r.model !== DEFAULT_PRICE_MODEL).map((r) => ({ model: r.model, ...priceView(priceOfRow(r)), updated_at: r.updated_at, updated_by: r.updated_by })),
  };
}

export async function loadSettings(db: ReadModelDb, tenantId: string): Promise<Settings & { tenant_id: string; updated_at: string | null; updated_by: string | null }> {
  const row = await db.selectFrom('billing_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  return { tenant_id: tenantId, ...settingsOfRow(row), updated_at: row?.updated_at ?? null, updated_by: row?.updated_by ?? null };
}

export async function balanceOf(db: ReadModelDb, tenantId: string, userId: string): Promise<{ balance_micro: number; updated_at: string | null }> {
  const row = await db.selectFrom('billing_balances').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return { balance_micro: n(row?.balance_micro), updated_at: row?.updated_at ?? null };
}

export async function listBalances(db: ReadModelDb, tenantId: string) {
  const rows = await db.selectFrom('billing_balances').selectAll().where('tenant_id', '=', tenantId).orderBy('user_id').execute();
  return rows.map((r) => ({ user_id: r.user_id, balance_micro: n(r.balance_micro), updated_at: r.updated_at }));
}

// --- ledger ------------------------------------------------------------------------------------

export function ledgerEntryView(row: BillingLedgerTable) {
  const amount = n(row.amount_micro);
  const after = n(row.balance_after_micro);
  return {
    id: row.id,
    object: 'billing.ledger_entry' as const,
    tenant_id: row.tenant_id,
    user_id: row.user_id,
    type: row.entry_type as LedgerEntryType,
    amount: formatCredits(amount),
    amount_micro: amount,
    balance_after: formatCredits(after),
    balance_after_micro: after,
    request_id: row.request_id,
    event_id: row.event_id,
    model: row.model,
    prompt_tokens: row.prompt_tokens === null ? null : n(row.prompt_tokens),
    completion_tokens: row.completion_tokens === null ? null : n(row.completion_tokens),
    key_id: row.key_id,
    reason: row.reason,
    plan_id: row.plan_id,
    subscription_id: row.subscription_id,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}
export type LedgerEntryView = ReturnType<typeof ledgerEntryView>;

export interface LedgerFilter {
  tenantId: string;
  userId?: string;
  /** ISO time, inclusive. */
  from?: string;
  /** ISO time, exclusive. */
  to?: string;
  type?: LedgerEntryType;
  limit: number;
}

/** Ledger entries in log order (the order the running balances were computed in). */
export async function listLedger(db: ReadModelDb, f: LedgerFilter): Promise<LedgerEntryView[]> {
  let query = db.selectFrom('billing_ledger').selectAll().where('tenant_id', '=', f.tenantId);
  if (f.userId !== undefined) query = query.where('user_id', '=', f.userId);
  if (f.from !== undefined) query = query.where('created_at', '>=', f.from);
  if (f.to !== undefined) query = query.where('created_at', '<', f.to);
  if (f.type !== undefined) query = query.where('entry_type', '=', f.type);
  const rows = await query.orderBy('event_position').orderBy('event_version').limit(f.limit).execute();
  return rows.map(ledgerEntryView);
}

export async function ledgerEntryAt(db: ReadModelDb, tenantId: string, position: number): Promise<LedgerEntryView | null> {
  const row = await db.selectFrom('billing_ledger').selectAll().where('tenant_id', '=', tenantId).where('event_position', '=', position).orderBy('event_version').executeTakeFirst();
  return row ? ledgerEntryView(row) : null;
}

export const LEDGER_CSV_COLUMNS = [
  'id',
  'created_at',
  'tenant_id',
  'user_id',
  'type',
  'amount',
  'amount_micro',
  'balance_after',
  'balance_after_micro',
  'request_id',
  'event_id',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'key_id',
  'reason',
  'plan_id',
  'subscription_id',
  'created_by',
] as const satisfies ReadonlyArray<keyof LedgerEntryView>;

/** Free-text fields a spreadsheet could take for a formula: prefixed with a quote. */
const TEXT_FIELDS = new Set<string>(['request_id', 'model', 'reason', 'created_by']);

function csvField(column: string, value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (TEXT_FIELDS.has(column) && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180 CSV (CRLF line ends), one header line, columns as LEDGER_CSV_COLUMNS. */
export function ledgerCsv(entries: readonly LedgerEntryView[]): string {
  const lines = [LEDGER_CSV_COLUMNS.join(',')];
  for (const e of entries) lines.push(LEDGER_CSV_COLUMNS.map((c) => csvField(c, e[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}

// --- statements --------------------------------------------------------------------------------

/** A calendar month in UTC ("2026-11") as [from, to). */
export function monthRange(period: string): { from: string; to: string } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(year, month - 1, 1)).toISOString(), to: new Date(Date.UTC(year, month, 1)).toISOString() };
}

interface StatementLine {
  user_id: string;
  opening_micro: number;
  topups_micro: number;
  adjustments_micro: number;
  charges_micro: number;
  subscription_fees_micro: number;
  closing_micro: number;
  requests: number;
  covered_requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micro: number;
}

const TYPE_FIELD: Record<LedgerEntryType, 'topups_micro' | 'adjustments_micro' | 'charges_micro' | 'subscription_fees_micro'> = {
  topup: 'topups_micro',
  adjustment: 'adjustments_micro',
  charge: 'charges_micro',
  subscription_fee: 'subscription_fees_micro',
};

function lineView(l: StatementLine) {
  return {
    user_id: l.user_id,
    opening_balance: formatCredits(l.opening_micro),
    opening_balance_micro: l.opening_micro,
    topups: formatCredits(l.topups_micro),
    topups_micro: l.topups_micro,
    adjustments: formatCredits(l.adjustments_micro),
    adjustments_micro: l.adjustments_micro,
    charges: formatCredits(l.charges_micro),
    charges_micro: l.charges_micro,
    subscription_fees: formatCredits(l.subscription_fees_micro),
    subscription_fees_micro: l.subscription_fees_micro,
    closing_balance: formatCredits(l.closing_micro),
    closing_balance_micro: l.closing_micro,
    requests: l.requests,
    covered_requests: l.covered_requests,
    prompt_tokens: l.prompt_tokens,
    completion_tokens: l.completion_tokens,
    list_cost: formatCredits(l.cost_micro),
    list_cost_micro: l.cost_micro,
  };
}

/**
 * A month's statement per user: opening balance (everything before the month), top-ups,
 * adjustments, charges and subscription fees in it (negative amounts are debits), closing balance
 * (= opening + the month's movements), and the billable requests of the month.
 */
export async function statement(db: ReadModelDb, tenantId: string, period: string, userId?: string) {
  const { from, to } = monthRange(period);
  const lines = new Map<string, StatementLine>();
  const line = (user: string) => {
    let l = lines.get(user);
    if (!l) {
      l = { user_id: user, opening_micro: 0, topups_micro: 0, adjustments_micro: 0, charges_micro: 0, subscription_fees_micro: 0, closing_micro: 0, requests: 0, covered_requests: 0, prompt_tokens: 0, completion_tokens: 0, cost_micro: 0 };
      lines.set(user, l);
    }
    return l;
  };

  let before = db.selectFrom('billing_ledger').select((eb) => ['user_id', eb.fn.sum<string | number>('amount_micro').as('total')]).where('tenant_id', '=', tenantId).where('created_at', '<', from);
  if (userId !== undefined) before = before.where('user_id', '=', userId);
  for (const row of await before.groupBy('user_id').execute()) line(row.user_id).opening_micro = n(row.total);

  let within = db
    .selectFrom('billing_ledger')
    .select((eb) => ['user_id', 'entry_type', eb.fn.sum<string | number>('amount_micro').as('total')])
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to);
  if (userId !== undefined) within = within.where('user_id', '=', userId);
  for (const row of await within.groupBy(['user_id', 'entry_type']).execute()) {
    const field = TYPE_FIELD[row.entry_type as LedgerEntryType];
    if (field) line(row.user_id)[field] += n(row.total);
  }

  let requests = db
    .selectFrom('billing_requests')
    .select((eb) => [
      'user_id',
      eb.fn.countAll<string | number>().as('requests'),
      eb.fn.sum<string | number>('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum<string | number>('completion_tokens').as('completion_tokens'),
      eb.fn.sum<string | number>('cost_micro').as('cost_micro'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to);
  if (userId !== undefined) requests = requests.where('user_id', '=', userId);
  for (const row of await requests.groupBy('user_id').execute()) {
    const l = line(row.user_id);
    l.requests = n(row.requests);
    l.prompt_tokens = n(row.prompt_tokens);
    l.completion_tokens = n(row.completion_tokens);
    l.cost_micro = n(row.cost_micro);
  }
  let covered = db
    .selectFrom('billing_requests')
    .select((eb) => ['user_id', eb.fn.countAll<string | number>().as('n')])
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('coverage', '!=', 'none');
  if (userId !== undefined) covered = covered.where('user_id', '=', userId);
  for (const row of await covered.groupBy('user_id').execute()) line(row.user_id).covered_requests = n(row.n);

  const sorted = [...lines.values()].sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0));
  const totals: StatementLine = { user_id: '*', opening_micro: 0, topups_micro: 0, adjustments_micro: 0, charges_micro: 0, subscription_fees_micro: 0, closing_micro: 0, requests: 0, covered_requests: 0, prompt_tokens: 0, completion_tokens: 0, cost_micro: 0 };
  for (const l of sorted) {
    l.closing_micro = l.opening_micro + l.topups_micro + l.adjustments_micro + l.charges_micro + l.subscription_fees_micro;
    for (const key of Object.keys(totals) as Array<keyof StatementLine>) if (key !== 'user_id') (totals[key] as number) += l[key] as number;
  }
  const { user_id: _all, ...totalsView } = lineView(totals);
  return { object: 'billing.statement' as const, tenant_id: tenantId, period, from, to, users: sorted.map(lineView), totals: totalsView };
}

// --- plans and subscriptions ---------------------------------------------------------------------

export function planView(row: BillingPlansTable) {
  const price = n(row.price_micro);
  return {
    id: row.id,
    object: 'plan' as const,
    tenant_id: row.tenant_id,
    name: row.name,
    description: row.description,
    period: JSON.parse(row.period) as Period,
    quotas: JSON.parse(row.quotas) as PlanQuota[],
    price: formatCredits(price),
    price_micro: price,
    deleted: n(row.deleted) === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function findPlan(db: ReadModelDb, tenantId: string, planId: string, includeDeleted = false) {
  let query = db.selectFrom('billing_plans').selectAll().where('tenant_id', '=', tenantId).where('id', '=', planId);
  if (!includeDeleted) query = query.where('deleted', '=', 0);
  return query.executeTakeFirst();
}

export async function listPlans(db: ReadModelDb, tenantId: string, includeDeleted = false) {
  let query = db.selectFrom('billing_plans').selectAll().where('tenant_id', '=', tenantId);
  if (!includeDeleted) query = query.where('deleted', '=', 0);
  return (await query.orderBy('created_at').orderBy('id').execute()).map(planView);
}

export const termsOf = (row: BillingPlansTable): PlanTerms => ({
  plan_id: row.id,
  plan_name: row.name,
  period: JSON.parse(row.period) as Period,
  quotas: JSON.parse(row.quotas) as PlanQuota[],
  price_micro: n(row.price_micro),
});

export function subscriptionView(row: BillingSubscriptionsTable, now = Date.now()) {
  const terms = JSON.parse(row.terms) as PlanTerms;
  const used = JSON.parse(row.used) as QuotaUse[];
  const status = row.status === 'canceled' ? 'canceled' : now >= Date.parse(row.period_end) ? 'expired' : 'active';
  return {
    id: row.subscription_id,
    object: 'subscription' as const,
    tenant_id: row.tenant_id,
    user_id: row.user_id,
    plan_id: row.plan_id,
    plan_name: terms.plan_name,
    status: status as 'active' | 'expired' | 'canceled',
    period: terms.period,
    price: formatCredits(terms.price_micro),
    price_micro: terms.price_micro,
    current_period_start: row.period_start,
    current_period_end: row.period_end,
    quotas: terms.quotas.map((q, i) => {
      const u = used[i] ?? { requests: 0, tokens: 0 };
      return { ...q, used_requests: u.requests, used_tokens: u.tokens, remaining: Math.max(0, remainingOf(q, u)) };
    }),
    started_at: row.started_at,
    canceled_at: row.canceled_at,
    updated_at: row.updated_at,
  };
}

export async function findSubscription(db: ReadModelDb, tenantId: string, userId: string) {
  return db.selectFrom('billing_subscriptions').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
}

export async function listSubscriptions(db: ReadModelDb, tenantId: string) {
  return (await db.selectFrom('billing_subscriptions').selectAll().where('tenant_id', '=', tenantId).orderBy('user_id').execute()).map((r) => subscriptionView(r));
}

/**
 * The billing projection: ONE projection for price tables, tenant settings, credit movements,
 * plans, subscriptions and usage, so that all of them are applied in exact log order: a usage
 * event is rated with the prices, the coverage mode and the subscription usage in force at its
 * place in the log, and a rebuild (replay) gives the very same tables.
 *
 * Tables: billing_prices, billing_settings, billing_balances, billing_ledger (immutable, one
 * entry per event that moved a balance, with the running balance after it), billing_requests
 * (every billable request once: its rating, and the per-request_id de-duplication),
 * billing_plans, billing_subscriptions (with the current period's usage) and billing_key_spend
 * (what each API key has spent at list price: re-seeds quota counters after a restart).
 *
 * The billing live view (`billingLiveView`) holds what the relay's admission needs in memory —
 * prices, settings, balances, subscriptions and their usage — and applies the same rules
 * (src/billing/rating.ts) to the same events, so every instance admits without a database read.
 */
import type { Insertable } from 'kysely';
import { insertRows, preparedStatement, selectWhereIn } from '../adapters/sql/compiled.js';
import { CREDITS_EVENT_TYPES, CreditsEvent } from '../commands/credits/events.js';
import { PLAN_EVENT_TYPES, PlanEvent, type PlanTerms } from '../commands/plans/events.js';
import { PRICING_EVENT_TYPES, PricingEvent } from '../commands/pricing/events.js';
import { SETTINGS_EVENT_TYPES, SettingsEvent } from '../commands/settings/events.js';
import { SUBSCRIPTION_EVENT_TYPES, SubscriptionEvent } from '../commands/subscriptions/events.js';
import { USAGE_RECORDED, type UsageData } from '../commands/usage/events.js';
import type { BillingBalancesTable, BillingLedgerTable, BillingPricesTable, BillingRequestsTable, BillingSettingsTable, BillingSubscriptionsTable } from '../adapters/sql/schema.js';
import type { StoredEvent } from '../ports/event-store.js';
import { priceIn, type Price, type PriceTable } from '../billing/pricing.js';
import { billedModel, DEFAULT_SETTINGS, isBillable, rate, trafficOf, usageFingerprint, type CoverageMode, type QuotaUse, type Settings, type SubscriptionSnapshot } from '../billing/rating.js';
import { FifoMap } from '../fifo-map.js';
import { idLookup } from './request-ids.js';
import type { LiveViewDefinition } from './runtime/live-view.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';
import { requireUsageEvent } from './usage-events.js';

export const BILLING_EVENT_TYPES = [...PRICING_EVENT_TYPES, ...SETTINGS_EVENT_TYPES, ...CREDITS_EVENT_TYPES, ...PLAN_EVENT_TYPES, ...SUBSCRIPTION_EVENT_TYPES, USAGE_RECORDED] as const;

export type LedgerEntryType = 'charge' | 'topup' | 'adjustment' | 'subscription_fee';

/** The default price's row in billing_prices. */
export const DEFAULT_PRICE_MODEL = '';

const idOf = (stream: string) => stream.slice(stream.indexOf('-') + 1);
const n = (v: number | string | bigint) => Number(v);

export const priceOfRow = (row: Pick<BillingPricesTable, 'input_per_1m_micro' | 'output_per_1m_micro' | 'per_request_micro'>): Price => ({
  input_per_1m_micro: n(row.input_per_1m_micro),
  output_per_1m_micro: n(row.output_per_1m_micro),
  per_request_micro: n(row.per_request_micro),
});

export const settingsOfRow = (row: BillingSettingsTable | undefined): Settings =>
  row ? { relay_api_enabled: n(row.relay_api_enabled) === 1, subscription_covers_relay: row.subscription_covers_relay as CoverageMode } : DEFAULT_SETTINGS;

export function snapshotOfRow(row: BillingSubscriptionsTable): SubscriptionSnapshot {
  const terms = JSON.parse(row.terms) as PlanTerms;
  return { status: row.status as 'active' | 'canceled', period_start: row.period_start, period_end: row.period_end, canceled_at: row.canceled_at, quotas: terms.quotas, used: JSON.parse(row.used) as QuotaUse[] };
}

const freshUsage = (terms: PlanTerms): QuotaUse[] => terms.quotas.map(() => ({ requests: 0, tokens: 0 }));

async function upsertPrice(trx: ReadModelDb, tenantId: string, model: string, price: Price, at: string, by: string | null) {
  const values = { ...price, updated_at: at, updated_by: by };
  const updated = await trx.updateTable('billing_prices').set(values).where('tenant_id', '=', tenantId).where('model', '=', model).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('billing_prices').values({ tenant_id: tenantId, model, ...values }).execute();
}

/** Moves a user's balance by `delta` and returns the balance after it. */
async function moveBalance(trx: ReadModelDb, tenantId: string, userId: string, delta: number, at: string): Promise<number> {
  const row = await trx.selectFrom('billing_balances').select('balance_micro').where('user_id', '=', userId).executeTakeFirst();
  const after = (row ? n(row.balance_micro) : 0) + delta;
  if (row) await trx.updateTable('billing_balances').set({ balance_micro: after, updated_at: at }).where('user_id', '=', userId).execute();
  else await trx.insertInto('billing_balances').values({ user_id: userId, tenant_id: tenantId, balance_micro: after, updated_at: at }).execute();
  return after;
}

interface EntryFields {
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

function ledgerRow(stored: StoredEvent, e: EntryFields, balanceAfter: number): Insertable<BillingLedgerTable> {
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

/** Moves the balance and writes the ledger entry (id = the event's id: one entry per event at most). */
async function post(trx: ReadModelDb, stored: StoredEvent, e: EntryFields) {
  const after = await moveBalance(trx, e.tenantId, e.userId, e.amount, stored.occurred_at);
  await trx.insertInto('billing_ledger').values(ledgerRow(stored, e, after)).execute();
}

interface UsageItem {
  stored: StoredEvent;
  usage: UsageData;
  fingerprint: string;
}

/** Every column of billing_requests / billing_ledger, in the order their multi-row INSERTs bind them. */
const REQUEST_COLUMNS = [
  'dedupe_key',
  'request_id',
  'fingerprint',
  'tenant_id',
  'user_id',
  'key_id',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'input_per_1m_micro',
  'output_per_1m_micro',
  'per_request_micro',
  'cost_micro',
  'charged_micro',
  'coverage',
  'event_id',
  'event_position',
  'event_version',
  'created_at',
] as const satisfies ReadonlyArray<keyof BillingRequestsTable>;
const LEDGER_COLUMNS = [
  'id',
  'tenant_id',
  'user_id',
  'entry_type',
  'amount_micro',
  'balance_after_micro',
  'request_id',
  'event_id',
  'event_position',
  'event_version',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'key_id',
  'reason',
  'plan_id',
  'subscription_id',
  'created_by',
  'created_at',
] as const satisfies ReadonlyArray<keyof BillingLedgerTable>;

/** The request ids already rated, with their rows' fingerprints. */
const ratedFingerprints = idLookup('billing_requests');

// The writes of every batch that moves a balance or a key's spend: compiled once.
const setBalance = preparedStatement('billing.balance.set', ['user_id', 'balance_micro', 'updated_at'], (db: ReadModelDb, p) =>
  db.updateTable('billing_balances').set({ balance_micro: p('balance_micro'), updated_at: p('updated_at') }).where('user_id', '=', p('user_id')),
);
const addKeySpend = preparedStatement('billing.key_spend.add', ['key_id', 'delta', 'updated_at'], (db: ReadModelDb, p) =>
  db
    .updateTable('billing_key_spend')
    .set((eb) => ({ spent_micro: eb('spent_micro', '+', p('delta')), updated_at: p('updated_at') }))
    .where('key_id', '=', p('key_id')),
);

/**
 * Rates a run of usage events (one commit's, in log order) with ONE read per table and ONE
 * write per row touched: the same result as rating them one by one (the per-event `apply` goes
 * through here too), at a fraction of the statements.
 */
async function applyUsageBatch(trx: ReadModelDb, items: readonly UsageItem[]) {
  const billable = items.filter(({ usage }) => usage.user_id !== null && isBillable(usage));
  if (billable.length === 0) return;
  const unique = (values: string[]) => [...new Set(values)];
  const requestIds = unique(billable.map((i) => i.usage.request_id));
  const userIds = unique(billable.map((i) => i.usage.user_id!));
  const tenantIds = unique(billable.map((i) => i.usage.tenant_id));

  // Reads: what the requests already rated, prices, settings, subscriptions, balances.
  const seen = await ratedFingerprints(trx, requestIds);
  const prices = new Map<string, PriceTable>();
  for (const row of await selectWhereIn<BillingPricesTable>(trx, 'billing_prices.by_tenant', tenantIds, (ids) => trx.selectFrom('billing_prices').selectAll().where('tenant_id', 'in', ids as string[]))) {
    let table = prices.get(row.tenant_id);
    if (!table) prices.set(row.tenant_id, (table = { models: new Map(), default: null }));
    if (row.model === DEFAULT_PRICE_MODEL) table.default = priceOfRow(row);
    else table.models.set(row.model, priceOfRow(row));
  }
  const settings = new Map<string, Settings>();
  for (const row of await selectWhereIn<BillingSettingsTable>(trx, 'billing_settings.by_tenant', tenantIds, (ids) => trx.selectFrom('billing_settings').selectAll().where('tenant_id', 'in', ids as string[]))) {
    settings.set(row.tenant_id, settingsOfRow(row));
  }
  const subs = new Map<string, { tenantId: string; snapshot: SubscriptionSnapshot; at: string | null }>();
  for (const row of await selectWhereIn<BillingSubscriptionsTable>(trx, 'billing_subscriptions.by_user', userIds, (ids) => trx.selectFrom('billing_subscriptions').selectAll().where('user_id', 'in', ids as string[]))) {
    subs.set(row.user_id, { tenantId: row.tenant_id, snapshot: snapshotOfRow(row), at: null });
  }
  const balances = new Map<string, { tenantId: string; micro: number; exists: boolean; at: string | null }>();
  const balanceRows = await selectWhereIn<Pick<BillingBalancesTable, 'user_id' | 'tenant_id' | 'balance_micro'>>(trx, 'billing_balances.by_user', userIds, (ids) =>
    trx.selectFrom('billing_balances').select(['user_id', 'tenant_id', 'balance_micro']).where('user_id', 'in', ids as string[]),
  );
  for (const row of balanceRows) balances.set(row.user_id, { tenantId: row.tenant_id, micro: n(row.balance_micro), exists: true, at: null });

  // Rating, in log order, in memory.
  const requestRows: BillingRequestsTable[] = [];
  const ledgerRows: Array<Insertable<BillingLedgerTable>> = [];
  const keySpend = new Map<string, { tenantId: string; delta: number; at: string }>();
  for (const { stored, usage, fingerprint } of billable) {
    // Idempotent per request_id: the same usage event appended twice (a spool replayed after a
    // crash) is ignored; a different request that reused a client-chosen request id is billed.
    const prior = seen.get(usage.request_id);
    if (prior?.includes(fingerprint)) continue;
    const dedupeKey = prior === undefined ? usage.request_id : `${usage.request_id}~${prior.length}`;
    if (prior) prior.push(fingerprint);
    else seen.set(usage.request_id, [fingerprint]);

    const userId = usage.user_id!;
    const tenantId = usage.tenant_id;
    const model = billedModel(usage);
    const price = priceIn(prices.get(tenantId), model);
    const mode = (settings.get(tenantId) ?? DEFAULT_SETTINGS).subscription_covers_relay;
    const found = subs.get(userId);
    const sub = found && found.tenantId === tenantId ? found : undefined;
    const rating = rate({ kind: trafficOf(usage), model, prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, at: usage.started_at }, price, mode, sub?.snapshot);
    if (rating.quota && sub) {
      sub.snapshot.used[rating.quota.index] = rating.quota.used;
      sub.at = stored.occurred_at;
    }
    requestRows.push({
      dedupe_key: dedupeKey,
      request_id: usage.request_id,
      fingerprint,
      tenant_id: tenantId,
      user_id: userId,
      key_id: usage.key_id,
      model,
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      input_per_1m_micro: price.input_per_1m_micro,
      output_per_1m_micro: price.output_per_1m_micro,
      per_request_micro: price.per_request_micro,
      cost_micro: rating.cost,
      charged_micro: rating.charge,
      coverage: rating.coverage,
      event_id: stored.id,
      event_position: stored.position,
      event_version: stored.version,
      created_at: stored.occurred_at,
    });
    if (usage.key_id !== null && rating.cost > 0) {
      const spend = keySpend.get(usage.key_id);
      if (spend) {
        spend.delta += rating.cost;
        spend.at = stored.occurred_at;
      } else {
        keySpend.set(usage.key_id, { tenantId, delta: rating.cost, at: stored.occurred_at });
      }
    }
    if (rating.charge > 0) {
      let balance = balances.get(userId);
      if (!balance) balances.set(userId, (balance = { tenantId, micro: 0, exists: false, at: null }));
      balance.micro -= rating.charge;
      balance.at = stored.occurred_at;
      ledgerRows.push(
        ledgerRow(stored, { type: 'charge', tenantId, userId, amount: -rating.charge, requestId: usage.request_id, model, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, keyId: usage.key_id }, balance.micro),
      );
    }
  }

  // Writes: multi-row inserts, one update per balance / subscription / key touched.
  await insertRows(trx, 'billing_requests', REQUEST_COLUMNS, requestRows);
  await insertRows(trx, 'billing_ledger', LEDGER_COLUMNS, ledgerRows);
  for (const [userId, b] of balances) {
    if (b.at === null) continue;
    if (b.exists) await setBalance(trx, { user_id: userId, balance_micro: b.micro, updated_at: b.at });
    else await trx.insertInto('billing_balances').values({ user_id: userId, tenant_id: b.tenantId, balance_micro: b.micro, updated_at: b.at }).execute();
  }
  for (const [userId, sub] of subs) {
    if (sub.at !== null) await trx.updateTable('billing_subscriptions').set({ used: JSON.stringify(sub.snapshot.used), updated_at: sub.at }).where('user_id', '=', userId).execute();
  }
  for (const [keyId, spend] of keySpend) {
    const updated = await addKeySpend(trx, { key_id: keyId, delta: spend.delta, updated_at: spend.at });
    if (Number(updated.numAffectedRows) === 0) await trx.insertInto('billing_key_spend').values({ key_id: keyId, tenant_id: spend.tenantId, spent_micro: spend.delta, updated_at: spend.at }).execute();
  }
}

/** Every billing event but usage: rare, applied one by one. */
async function applyOther(trx: ReadModelDb, stored: StoredEvent): Promise<void> {
  const at = stored.occurred_at;
  const tenantId = stored.tenant_id;
  if ((PRICING_EVENT_TYPES as readonly string[]).includes(stored.type)) {
    const event = PricingEvent.parse({ type: stored.type, data: stored.data });
    switch (event.type) {
      case 'ModelPriceSet':
        return upsertPrice(trx, tenantId, event.data.model, priceOfRow(event.data), at, event.data.by);
      case 'DefaultPriceSet':
        return upsertPrice(trx, tenantId, DEFAULT_PRICE_MODEL, priceOfRow(event.data), at, event.data.by);
      case 'ModelPriceRemoved':
        await trx.deleteFrom('billing_prices').where('tenant_id', '=', tenantId).where('model', '=', event.data.model).execute();
        return;
    }
  }
  if ((SETTINGS_EVENT_TYPES as readonly string[]).includes(stored.type)) {
    const event = SettingsEvent.parse({ type: stored.type, data: stored.data });
    const current = settingsOfRow(await trx.selectFrom('billing_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst());
    const row = {
      relay_api_enabled: (event.data.relay_api_enabled ?? current.relay_api_enabled) ? 1 : 0,
      subscription_covers_relay: event.data.subscription_covers_relay ?? current.subscription_covers_relay,
      updated_at: at,
      updated_by: event.data.by,
    };
    const updated = await trx.updateTable('billing_settings').set(row).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('billing_settings').values({ tenant_id: tenantId, ...row }).execute();
    return;
  }
  if ((CREDITS_EVENT_TYPES as readonly string[]).includes(stored.type)) {
    const event = CreditsEvent.parse({ type: stored.type, data: stored.data });
    return post(trx, stored, {
      type: event.type === 'CreditsToppedUp' ? 'topup' : 'adjustment',
      tenantId,
      userId: event.data.user_id,
      amount: event.data.amount_micro,
      reason: event.data.reason,
      by: event.data.by,
    });
  }
  if ((PLAN_EVENT_TYPES as readonly string[]).includes(stored.type)) {
    const event = PlanEvent.parse({ type: stored.type, data: stored.data });
    const id = idOf(stored.stream);
    switch (event.type) {
      case 'PlanCreated':
        await trx
          .insertInto('billing_plans')
          .values({
            id,
            tenant_id: tenantId,
            name: event.data.name,
            description: event.data.description,
            period: JSON.stringify(event.data.period),
            quotas: JSON.stringify(event.data.quotas),
            price_micro: event.data.price_micro,
            deleted: 0,
            created_at: at,
            updated_at: at,
          })
          .execute();
        return;
      case 'PlanUpdated':
        await trx
          .updateTable('billing_plans')
          .set({
            ...(event.data.name !== undefined && { name: event.data.name }),
            ...(event.data.description !== undefined && { description: event.data.description }),
            ...(event.data.period !== undefined && { period: JSON.stringify(event.data.period) }),
            ...(event.data.quotas !== undefined && { quotas: JSON.stringify(event.data.quotas) }),
            ...(event.data.price_micro !== undefined && { price_micro: event.data.price_micro }),
            updated_at: at,
          })
          .where('id', '=', id)
          .execute();
        return;
      case 'PlanDeleted':
        await trx.updateTable('billing_plans').set({ deleted: 1, updated_at: at }).where('id', '=', id).execute();
        return;
    }
  }
  if ((SUBSCRIPTION_EVENT_TYPES as readonly string[]).includes(stored.type)) {
    const event = SubscriptionEvent.parse({ type: stored.type, data: stored.data });
    const userId = event.data.user_id;
    switch (event.type) {
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed': {
        const { terms } = event.data;
        const row = {
          tenant_id: tenantId,
          subscription_id: event.data.subscription_id,
          plan_id: terms.plan_id,
          terms: JSON.stringify(terms),
          status: 'active',
          period_start: event.data.period_start,
          period_end: event.data.period_end,
          used: JSON.stringify(freshUsage(terms)),
          canceled_at: null,
          updated_at: at,
        };
        if (event.type === 'SubscriptionStarted') {
          await trx.deleteFrom('billing_subscriptions').where('user_id', '=', userId).execute();
          await trx.insertInto('billing_subscriptions').values({ user_id: userId, ...row, started_at: event.data.period_start }).execute();
        } else {
          await trx.updateTable('billing_subscriptions').set(row).where('user_id', '=', userId).execute();
        }
        if (terms.price_micro > 0) {
          await post(trx, stored, { type: 'subscription_fee', tenantId, userId, amount: -terms.price_micro, planId: terms.plan_id, subscriptionId: event.data.subscription_id, reason: `${terms.plan_name}: ${event.data.period_start} – ${event.data.period_end}`, by: event.data.by });
        }
        return;
      }
      case 'SubscriptionCanceled':
        await trx.updateTable('billing_subscriptions').set({ status: 'canceled', canceled_at: event.data.at, updated_at: at }).where('user_id', '=', userId).execute();
        return;
    }
  }
}

export const billingProjection: Projection = {
  name: 'billing',
  // 2: billing_requests keyed by their event's log position (migration 0050).
  version: 2,
  eventTypes: BILLING_EVENT_TYPES,
  apply(trx, stored) {
    return billingProjection.applyCommit!(trx, [stored]);
  },
  /** Runs of usage events are rated as a batch; anything else in between is applied in its place. */
  async applyCommit(trx, events) {
    let run: UsageItem[] = [];
    for (const stored of events) {
      if (stored.type === USAGE_RECORDED) {
        const { usage, fingerprint } = requireUsageEvent(stored);
        run.push({ stored, usage, fingerprint });
        continue;
      }
      await applyUsageBatch(trx, run);
      run = [];
      await applyOther(trx, stored);
    }
    await applyUsageBatch(trx, run);
  },
  async reset(trx) {
    for (const table of ['billing_prices', 'billing_settings', 'billing_balances', 'billing_ledger', 'billing_requests', 'billing_plans', 'billing_subscriptions', 'billing_key_spend'] as const) {
      await trx.deleteFrom(table).execute();
    }
  },
};

// ---------------------------------------------------------------------------------------------
// The live view: what admission reads on every relay request.

export interface LiveSubscription extends SubscriptionSnapshot {
  tenant_id: string;
}

export interface BillingState {
  prices: Map<string, PriceTable>;
  settings: Map<string, Settings>;
  /** user id -> micro-credits */
  balances: Map<string, number>;
  /** user id -> subscription */
  subscriptions: Map<string, LiveSubscription>;
  /** request id -> fingerprints of the usage already applied (the most recent RECENT_REQUESTS). */
  recent: FifoMap<string, string[]>;
}

/**
 * How many recent request ids the live view remembers for de-duplication. A duplicate usage event
 * older than that would be counted twice in memory (admission only; the ledger is exact) until the
 * next restart re-seeds the view from the tables.
 */
export const RECENT_REQUESTS = 50_000;

function remember(state: BillingState, requestId: string, fingerprint: string) {
  const list = state.recent.get(requestId);
  if (list) list.push(fingerprint);
  else state.recent.set(requestId, [fingerprint]);
}

function tableOf(state: BillingState, tenantId: string): PriceTable {
  let table = state.prices.get(tenantId);
  if (!table) state.prices.set(tenantId, (table = { models: new Map(), default: null }));
  return table;
}

/**
 * Folds one usage event into the live view, once per request id and fingerprint (a usage event
 * seen again, e.g. re-published from a spool, is ignored). The view folds the events of other
 * instances as the log hands them over, and this instance's own as its relay publishes them
 * (`UsagePublisher`'s `beforeAppend`, wired in app.ts): admission sees a request's cost at once.
 */
export function foldUsage(state: BillingState, data: UsageData): void {
  // Published by this code base's relay: trusted shape (no schema parse on every request).
  if (data.user_id === null || !isBillable(data)) return;
  const fingerprint = usageFingerprint(data);
  const seen = state.recent.get(data.request_id);
  if (seen?.includes(fingerprint)) return;
  remember(state, data.request_id, fingerprint);
  const model = billedModel(data);
  const table = state.prices.get(data.tenant_id);
  const price = priceIn(table, model);
  const mode = (state.settings.get(data.tenant_id) ?? DEFAULT_SETTINGS).subscription_covers_relay;
  const found = state.subscriptions.get(data.user_id);
  const sub = found && found.tenant_id === data.tenant_id ? found : undefined;
  const rating = rate({ kind: trafficOf(data), model, prompt_tokens: data.prompt_tokens, completion_tokens: data.completion_tokens, at: data.started_at }, price, mode, sub);
  if (rating.quota && sub) sub.used[rating.quota.index] = rating.quota.used;
  if (rating.charge > 0) state.balances.set(data.user_id, (state.balances.get(data.user_id) ?? 0) - rating.charge);
}

export const billingLiveView: LiveViewDefinition<BillingState> = {
  projection: billingProjection,
  async load(db) {
    const state: BillingState = { prices: new Map(), settings: new Map(), balances: new Map(), subscriptions: new Map(), recent: new FifoMap(RECENT_REQUESTS) };
    for (const row of await db.selectFrom('billing_prices').selectAll().execute()) {
      const table = tableOf(state, row.tenant_id);
      if (row.model === DEFAULT_PRICE_MODEL) table.default = priceOfRow(row);
      else table.models.set(row.model, priceOfRow(row));
    }
    for (const row of await db.selectFrom('billing_settings').selectAll().execute()) state.settings.set(row.tenant_id, settingsOfRow(row));
    for (const row of await db.selectFrom('billing_balances').select(['user_id', 'balance_micro']).execute()) state.balances.set(row.user_id, n(row.balance_micro));
    for (const row of await db.selectFrom('billing_subscriptions').selectAll().execute()) state.subscriptions.set(row.user_id, { ...snapshotOfRow(row), tenant_id: row.tenant_id });
    const recent = await db.selectFrom('billing_requests').select(['request_id', 'fingerprint']).orderBy('event_position', 'desc').orderBy('event_version', 'desc').limit(RECENT_REQUESTS).execute();
    for (const row of recent.reverse()) remember(state, row.request_id, row.fingerprint);
    return state;
  },
  evolve(state, stored) {
    switch (stored.type) {
      case USAGE_RECORDED:
        foldUsage(state, stored.data as unknown as UsageData);
        break;
      case 'ModelPriceSet':
      case 'ModelPriceRemoved':
      case 'DefaultPriceSet': {
        const event = PricingEvent.parse({ type: stored.type, data: stored.data });
        const table = tableOf(state, stored.tenant_id);
        if (event.type === 'ModelPriceSet') table.models.set(event.data.model, priceOfRow(event.data));
        else if (event.type === 'DefaultPriceSet') table.default = priceOfRow(event.data);
        else table.models.delete(event.data.model);
        break;
      }
      case 'TenantSettingsChanged': {
        const event = SettingsEvent.parse({ type: stored.type, data: stored.data });
        const current = state.settings.get(stored.tenant_id) ?? DEFAULT_SETTINGS;
        state.settings.set(stored.tenant_id, {
          relay_api_enabled: event.data.relay_api_enabled ?? current.relay_api_enabled,
          subscription_covers_relay: event.data.subscription_covers_relay ?? current.subscription_covers_relay,
        });
        break;
      }
      case 'CreditsToppedUp':
      case 'CreditsAdjusted': {
        const event = CreditsEvent.parse({ type: stored.type, data: stored.data });
        state.balances.set(event.data.user_id, (state.balances.get(event.data.user_id) ?? 0) + event.data.amount_micro);
        break;
      }
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed':
      case 'SubscriptionCanceled': {
        const event = SubscriptionEvent.parse({ type: stored.type, data: stored.data });
        const userId = event.data.user_id;
        if (event.type === 'SubscriptionCanceled') {
          const current = state.subscriptions.get(userId);
          if (current) state.subscriptions.set(userId, { ...current, status: 'canceled', canceled_at: event.data.at });
          break;
        }
        const { terms } = event.data;
        state.subscriptions.set(userId, { tenant_id: stored.tenant_id, status: 'active', period_start: event.data.period_start, period_end: event.data.period_end, canceled_at: null, quotas: terms.quotas, used: freshUsage(terms) });
        if (terms.price_micro > 0) state.balances.set(userId, (state.balances.get(userId) ?? 0) - terms.price_micro);
        break;
      }
    }
    return state;
  },
};

/**
 * The billing live view: what the relay's admission reads on every request, in memory — prices,
 * settings, balances, subscriptions and their usage. It applies the billing projection's rules
 * (src/billing/rating.ts) to the same events (src/projections/billing/), so every instance admits
 * without a database read.
 */
import { CreditsEvent } from '../commands/credits/events.js';
import { PricingEvent } from '../commands/pricing/events.js';
import { SettingsEvent } from '../commands/settings/events.js';
import { SubscriptionEvent } from '../commands/subscriptions/events.js';
import { USAGE_RECORDED, type UsageData } from '../commands/usage/events.js';
import { priceIn, type PriceTable } from '../billing/pricing.js';
import { applySettingsChange, billedModel, DEFAULT_SETTINGS, isBillable, rate, trafficOf, usageFingerprint, type Settings, type SubscriptionSnapshot } from '../billing/rating.js';
import { FifoMap } from '../fifo-map.js';
import { billingProjection } from '../projections/billing/projection.js';
import { DEFAULT_PRICE_MODEL, freshUsage, priceOfRow, settingsOfRow, snapshotOfRow } from '../projections/billing/rows.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';

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
 * (a sink of `UsagePublisher`, added in app.ts): admission sees a request's cost at once.
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
    for (const row of await db.selectFrom('billing_balances').select(['user_id', 'balance_micro']).execute()) state.balances.set(row.user_id, Number(row.balance_micro));
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
        state.settings.set(stored.tenant_id, applySettingsChange(state.settings.get(stored.tenant_id) ?? DEFAULT_SETTINGS, event.data));
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

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
 * Usage events are rated in batches (usage-batch.ts); the billing live view (src/views/billing.ts)
 * applies the same rules (src/billing/rating.ts) to the same events in memory, so every instance
 * admits without a database read.
 */
import { CREDITS_EVENT_TYPES, CreditsEvent } from '../../commands/credits/events.js';
import { PLAN_EVENT_TYPES, PlanEvent } from '../../commands/plans/events.js';
import { PRICING_EVENT_TYPES, PricingEvent } from '../../commands/pricing/events.js';
import { SETTINGS_EVENT_TYPES, SettingsEvent } from '../../commands/settings/events.js';
import { SUBSCRIPTION_EVENT_TYPES, SubscriptionEvent } from '../../commands/subscriptions/events.js';
import { USAGE_RECORDED } from '../../commands/usage/events.js';
import type { StoredEvent } from '../../ports/event-store.js';
import type { Price } from '../../billing/pricing.js';
import { applySettingsChange } from '../../billing/rating.js';
import type { Projection, ReadModelDb } from '../runtime/projection.js';
import { requireUsageEvent } from '../usage-events.js';
import { DEFAULT_PRICE_MODEL, freshUsage, ledgerRow, priceOfRow, settingsOfRow, settingsRow, type EntryFields } from './rows.js';
import { applyUsageBatch, type UsageItem } from './usage-batch.js';

export const BILLING_EVENT_TYPES = [...PRICING_EVENT_TYPES, ...SETTINGS_EVENT_TYPES, ...CREDITS_EVENT_TYPES, ...PLAN_EVENT_TYPES, ...SUBSCRIPTION_EVENT_TYPES, USAGE_RECORDED] as const;

const idOf = (stream: string) => stream.slice(stream.indexOf('-') + 1);

async function upsertPrice(trx: ReadModelDb, tenantId: string, model: string, price: Price, at: string, by: string | null) {
  const values = { ...price, updated_at: at, updated_by: by };
  const updated = await trx.updateTable('billing_prices').set(values).where('tenant_id', '=', tenantId).where('model', '=', model).executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) await trx.insertInto('billing_prices').values({ tenant_id: tenantId, model, ...values }).execute();
}

/** Moves a user's balance by `delta` and returns the balance after it. */
async function moveBalance(trx: ReadModelDb, tenantId: string, userId: string, delta: number, at: string): Promise<number> {
  const row = await trx.selectFrom('billing_balances').select('balance_micro').where('user_id', '=', userId).executeTakeFirst();
  const after = (row ? Number(row.balance_micro) : 0) + delta;
  if (row) await trx.updateTable('billing_balances').set({ balance_micro: after, updated_at: at }).where('user_id', '=', userId).execute();
  else await trx.insertInto('billing_balances').values({ user_id: userId, tenant_id: tenantId, balance_micro: after, updated_at: at }).execute();
  return after;
}

/** Moves the balance and writes the ledger entry. */
async function post(trx: ReadModelDb, stored: StoredEvent, e: EntryFields) {
  const after = await moveBalance(trx, e.tenantId, e.userId, e.amount, stored.occurred_at);
  await trx.insertInto('billing_ledger').values(ledgerRow(stored, e, after)).execute();
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
    const next = applySettingsChange(settingsOfRow(await trx.selectFrom('billing_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst()), event.data);
    const row = { ...settingsRow(next), updated_at: at, updated_by: event.data.by };
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

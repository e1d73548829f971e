/**
 * Events of a user's subscription (`subscription-<user_id>`). Each period copies the plan's terms
 * (quotas, price), so later plan changes never rewrite a period already started. Starting and
 * renewing charge the plan's price (a `subscription_fee` ledger entry).
 */
import { z } from 'zod';
import { PlanTerms } from '../plans/events.js';

export const SubscriptionStarted = z.object({
  type: z.literal('SubscriptionStarted'),
  data: z.object({ subscription_id: z.string(), user_id: z.string(), terms: PlanTerms, period_start: z.string(), period_end: z.string(), by: z.string().nullable() }),
});
/** A new period: quotas start from zero again, the fee is charged again. */
export const SubscriptionRenewed = z.object({
  type: z.literal('SubscriptionRenewed'),
  data: z.object({ subscription_id: z.string(), user_id: z.string(), terms: PlanTerms, period_start: z.string(), period_end: z.string(), by: z.string().nullable() }),
});
/** Coverage ends at `at` (no refund). */
export const SubscriptionCanceled = z.object({
  type: z.literal('SubscriptionCanceled'),
  data: z.object({ subscription_id: z.string(), user_id: z.string(), at: z.string(), by: z.string().nullable() }),
});

export const SubscriptionEvent = z.discriminatedUnion('type', [SubscriptionStarted, SubscriptionRenewed, SubscriptionCanceled]);
export type SubscriptionEvent = z.infer<typeof SubscriptionEvent>;
export const SUBSCRIPTION_EVENT_TYPES = ['SubscriptionStarted', 'SubscriptionRenewed', 'SubscriptionCanceled'] as const;

/**
 * Events of a subscription plan (`plan-<plan_id>`, owned by its tenant): a name, a period, quotas
 * per model or model group (request counts or token counts), and a price per period.
 */
import { z } from 'zod';

export const PlanPeriod = z
  .union([z.enum(['day', 'week', 'month']), z.object({ days: z.number().int().min(1).max(3660) })])
  .describe('"day", "week", "month" (calendar month, UTC) or {"days": n}');

export const PlanQuota = z.object({
  /** Model names sharing this allowance (a model group); "*" = every model. */
  models: z.array(z.string().min(1).max(200)).min(1),
  /** Requests per period (or null when the quota counts tokens). */
  requests: z.number().int().positive().nullable(),
  /** Tokens (prompt + completion) per period (or null when the quota counts requests). */
  tokens: z.number().int().positive().nullable(),
});
export type PlanQuota = z.infer<typeof PlanQuota>;

/** What a subscription copies from the plan when it starts or renews. */
export const PlanTerms = z.object({
  plan_id: z.string(),
  plan_name: z.string(),
  period: PlanPeriod,
  quotas: z.array(PlanQuota),
  price_micro: z.number().int().min(0),
});
export type PlanTerms = z.infer<typeof PlanTerms>;

export const PlanCreated = z.object({
  type: z.literal('PlanCreated'),
  data: z.object({ plan_id: z.string(), name: z.string(), description: z.string().nullable(), period: PlanPeriod, quotas: z.array(PlanQuota), price_micro: z.number().int().min(0), by: z.string().nullable() }),
});
export const PlanUpdated = z.object({
  type: z.literal('PlanUpdated'),
  data: z.object({
    name: z.string().optional(),
    description: z.string().nullable().optional(),
    period: PlanPeriod.optional(),
    quotas: z.array(PlanQuota).optional(),
    price_micro: z.number().int().min(0).optional(),
    by: z.string().nullable(),
  }),
});
export const PlanDeleted = z.object({ type: z.literal('PlanDeleted'), data: z.object({ by: z.string().nullable() }) });

export const PlanEvent = z.discriminatedUnion('type', [PlanCreated, PlanUpdated, PlanDeleted]);
export type PlanEvent = z.infer<typeof PlanEvent>;
export const PLAN_EVENT_TYPES = ['PlanCreated', 'PlanUpdated', 'PlanDeleted'] as const;

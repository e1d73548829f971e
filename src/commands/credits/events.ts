/**
 * Events of a user's credits (`credits-<user_id>`): top-ups and adjustments, each with a reason.
 * Charges are not events here: the billing projection derives them from usage events, in log order.
 */
import { z } from 'zod';

const Movement = z.object({
  user_id: z.string(),
  /** Micro-credits: positive for a top-up; signed for an adjustment. */
  amount_micro: z.number().int(),
  reason: z.string(),
  by: z.string().nullable(),
});

export const CreditsToppedUp = z.object({ type: z.literal('CreditsToppedUp'), data: Movement });
export const CreditsAdjusted = z.object({ type: z.literal('CreditsAdjusted'), data: Movement });

export const CreditsEvent = z.discriminatedUnion('type', [CreditsToppedUp, CreditsAdjusted]);
export type CreditsEvent = z.infer<typeof CreditsEvent>;
export const CREDITS_EVENT_TYPES = ['CreditsToppedUp', 'CreditsAdjusted'] as const;

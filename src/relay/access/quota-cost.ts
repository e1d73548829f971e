/**
 * What a request costs against an API key's `quota_limit` (credits). Amounts are integer
 * micro-credits (1 credit = 1,000,000) so sums are exact.
 *
 * The cost is the request at the tenant's prices (src/billing/pricing.ts, list price: before any
 * subscription coverage), supplied by the billing gate: an estimate, rounded up, is reserved before
 * the upstream call and replaced by the actual cost afterwards.
 */
import type { UsageData } from '../../commands/usage/events.js';
import { MICRO_PER_CREDIT, toMicro } from '../../billing/money.js';

export { MICRO_PER_CREDIT };

export interface QuotaCost {
  /** Conservative estimate (micro-credits, rounded up) of a request to `model` in `tenantId`. */
  estimate(tenantId: string, model: string, promptTokens: number, completionTokens: number): number;
  /** What a finished request costs (micro-credits); 0 for one that generated nothing. */
  actual(usage: UsageData): number;
}

/** A key's quota_limit (credits, a JSON number) in micro-credits: exact for up to 6 decimals. */
export function creditsToMicro(credits: number): number {
  return toMicro(credits) ?? Math.round(credits * MICRO_PER_CREDIT);
}

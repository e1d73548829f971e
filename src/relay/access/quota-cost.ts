/**
 * What a request costs against an API key's `quota_limit` (credits). Amounts are integer
 * micro-credits (1 credit = 1,000,000) so sums are exact.
 *
 * Until per-model pricing exists, a request costs 1 credit per 1,000 tokens (prompt +
 * completion), i.e. 1,000 micro-credits per token.
 */
export const MICRO_PER_CREDIT = 1_000_000;
const MICRO_PER_TOKEN = 1_000;

export function costOfTokens(tokens: number): number {
  return Math.max(0, Math.round(tokens)) * MICRO_PER_TOKEN;
}

export function creditsToMicro(credits: number): number {
  return Math.round(credits * MICRO_PER_CREDIT);
}

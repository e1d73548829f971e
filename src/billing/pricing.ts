/**
 * Charge arithmetic. A price is, in integer micro-credits: per 1M prompt tokens, per 1M completion
 * tokens, and per request. A request's charge is
 *
 *   prompt_tokens × input / 1M + completion_tokens × output / 1M + per_request
 *
 * computed exactly (BigInt: a token count times a price per 1M tokens can exceed 2^53) and rounded
 * ONCE, half up, to an integer micro-credit. (The per-request price is already an integer, so
 * rounding the sum is rounding the token part.) Reservation estimates round up instead.
 */

export interface Price {
  /** Micro-credits per 1,000,000 prompt tokens. */
  input_per_1m_micro: number;
  /** Micro-credits per 1,000,000 completion tokens. */
  output_per_1m_micro: number;
  /** Micro-credits per request. */
  per_request_micro: number;
}

export const FREE: Price = Object.freeze({ input_per_1m_micro: 0, output_per_1m_micro: 0, per_request_micro: 0 });

export const isFree = (price: Price) => price.input_per_1m_micro === 0 && price.output_per_1m_micro === 0 && price.per_request_micro === 0;

const MILLION = 1_000_000n;

function tokenPart(price: Price, promptTokens: number, completionTokens: number): bigint {
  return BigInt(Math.max(0, Math.trunc(promptTokens))) * BigInt(price.input_per_1m_micro) + BigInt(Math.max(0, Math.trunc(completionTokens))) * BigInt(price.output_per_1m_micro);
}

/** What `promptTokens` + `completionTokens` cost at `price`, rounded once half up; with the per-request price unless told otherwise. */
export function chargeMicro(price: Price, promptTokens: number, completionTokens: number, withRequestPrice = true): number {
  const rounded = (tokenPart(price, promptTokens, completionTokens) + MILLION / 2n) / MILLION;
  return Number(rounded) + (withRequestPrice ? price.per_request_micro : 0);
}

/** Like chargeMicro but rounded up: for reservations, which must not under-estimate. */
export function estimateMicro(price: Price, promptTokens: number, completionTokens: number): number {
  const rounded = (tokenPart(price, promptTokens, completionTokens) + MILLION - 1n) / MILLION;
  return Number(rounded) + price.per_request_micro;
}

/** A tenant's price table: explicit model prices and the default for every other model. */
export interface PriceTable {
  models: Map<string, Price>;
  /** null: never set (then unknown models are free). */
  default: Price | null;
}

export function priceIn(table: PriceTable | undefined, model: string): Price {
  return table?.models.get(model) ?? table?.default ?? FREE;
}

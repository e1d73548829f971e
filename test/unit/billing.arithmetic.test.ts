/** Charge arithmetic and credit amounts: integers only, rounded once, exact at any size. */
import { describe, expect, it } from 'vitest';
import { formatCredits, parseCredits, toMicro } from '../../src/billing/money.js';
import { chargeMicro, estimateMicro, FREE, isFree, priceIn, type Price } from '../../src/billing/pricing.js';
import { AppError } from '../../src/errors.js';

const price = (input: number, output: number, perRequest = 0): Price => ({ input_per_1m_micro: input, output_per_1m_micro: output, per_request_micro: perRequest });

describe('credits amounts', () => {
  it('parses decimal strings and numbers exactly into micro-credits', () => {
    expect(toMicro('12.5')).toBe(12_500_000);
    expect(toMicro('0.000001')).toBe(1);
    expect(toMicro(0.1)).toBe(100_000);
    expect(toMicro(0.3)).toBe(300_000); // 0.1 + 0.2 style float noise never enters
    expect(toMicro('-3.25')).toBe(-3_250_000);
    expect(toMicro('+7')).toBe(7_000_000);
    expect(toMicro('999999999.999999')).toBe(999_999_999_999_999);
  });

  it('refuses more than 6 decimals, exponents and garbage', () => {
    for (const bad of ['0.0000001', '1e3', 1e-7, 'abc', '', '1.', '.5', Infinity, NaN, '1000000000']) expect(toMicro(bad as string | number), String(bad)).toBeNull();
    expect(() => parseCredits('1.2345678', 'amount')).toThrowError(AppError);
    try {
      parseCredits('x', 'amount');
    } catch (error) {
      expect(error).toMatchObject({ status: 400, code: 'invalid_amount', param: 'amount' });
    }
  });

  it('formats micro-credits as 6-decimal strings', () => {
    expect(formatCredits(0)).toBe('0.000000');
    expect(formatCredits(1)).toBe('0.000001');
    expect(formatCredits(12_500_000)).toBe('12.500000');
    expect(formatCredits(-1_500_000)).toBe('-1.500000');
    expect(formatCredits(-42)).toBe('-0.000042');
  });
});

describe('charge arithmetic', () => {
  it('is prompt × input/1M + completion × output/1M + per request', () => {
    // 11 prompt + 7 completion tokens at 2.5 / 10 credits per 1M, plus 0.001 per request:
    // 11 × 2.5 + 7 × 10 = 97.5 micro-credits -> rounded half up to 98, + 1,000.
    expect(chargeMicro(price(2_500_000, 10_000_000, 1_000), 11, 7)).toBe(1_098);
    expect(chargeMicro(price(2_500_000, 10_000_000, 1_000), 11, 7, false)).toBe(98);
  });

  it('rounds once, half up, on the sum (not per part)', () => {
    // 1 × 0.4 + 1 × 0.4 = 0.8 micro: each part alone would round to 0; the sum rounds to 1.
    expect(chargeMicro(price(400_000, 400_000), 1, 1)).toBe(1);
    expect(chargeMicro(price(500_000, 0), 1, 0)).toBe(1); // exactly .5 goes up
    expect(chargeMicro(price(499_999, 0), 1, 0)).toBe(0);
    expect(chargeMicro(price(1_500_000, 0), 1, 0)).toBe(2); // 1.5 -> 2
  });

  it('stays exact beyond 2^53 intermediate values', () => {
    // At 999,999,999.999999 credits per 1M tokens, token × price exceeds 2^53 quickly.
    const expensive = price(999_999_999_999_999, 0);
    expect(chargeMicro(expensive, 7, 0)).toBe(7_000_000_000); // 6,999,999,999.999993 -> 7e9
    // 123,456,789 tokens × 12,345,678,901 micro per 1M: ~1.5e18 before the division.
    const exact = (123_456_789n * 12_345_678_901n + 500_000n) / 1_000_000n;
    expect(BigInt(chargeMicro(price(12_345_678_901, 0), 123_456_789, 0))).toBe(exact);
    expect(chargeMicro(price(12_345_678_901, 0), 123_456_789, 0)).toBe(1_524_157_875_143);
  });

  it('estimates round up, never under the charge', () => {
    expect(estimateMicro(price(400_000, 400_000), 1, 1)).toBe(1);
    expect(estimateMicro(price(100_000, 0), 1, 0)).toBe(1);
    expect(estimateMicro(price(100_000, 0), 0, 0)).toBe(0);
    for (const [p, c] of [
      [1, 1],
      [13, 999],
      [12345, 678],
    ] as const) {
      const pr = price(333_333, 777_777, 5);
      expect(estimateMicro(pr, p, c)).toBeGreaterThanOrEqual(chargeMicro(pr, p, c));
    }
  });

  it('looks a model up in the table, then the default, then free', () => {
    const table = { models: new Map([['a', price(1, 2, 3)]]), default: price(4, 5, 6) };
    expect(priceIn(table, 'a')).toEqual(price(1, 2, 3));
    expect(priceIn(table, 'b')).toEqual(price(4, 5, 6));
    expect(priceIn({ models: new Map(), default: null }, 'b')).toEqual(FREE);
    expect(priceIn(undefined, 'b')).toEqual(FREE);
    expect(isFree(FREE)).toBe(true);
    expect(isFree(price(0, 0, 1))).toBe(false);
  });
});

/**
 * Credits as integers. Every amount inside Switchyard is an integer number of micro-credits
 * (1 credit = 1,000,000 micro-credits), so sums and running balances are exact. The API takes
 * credits as decimal strings or JSON numbers with at most 6 decimals (parsed digit by digit, never
 * through floating-point arithmetic) and shows them both ways: `"12.500000"` and `12500000`.
 */
import { BadRequestError } from '../errors.js';

export const MICRO_PER_CREDIT = 1_000_000;

/** Sign, up to 9 integer digits (a billion credits), up to 6 decimals. */
const DECIMAL = /^([+-])?(\d{1,9})(?:\.(\d{1,6}))?$/;
export const CREDITS_PATTERN = DECIMAL.source;

/** Exact conversion of a decimal credits value to micro-credits, or null if it is not one. */
export function toMicro(value: string | number): number | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const whole = Number(match[2]);
  const fraction = Number((match[3] ?? '').padEnd(6, '0'));
  const micro = whole * MICRO_PER_CREDIT + fraction;
  return match[1] === '-' ? -micro : micro;
}

/** Like toMicro, but a 400 naming `param` for anything that is not a credits amount. */
export function parseCredits(value: string | number, param: string): number {
  const micro = toMicro(value);
  if (micro === null) throw new BadRequestError(`${param} must be a number of credits with at most 6 decimals (e.g. "12.5")`, 'invalid_amount', param);
  return micro;
}

/** Micro-credits as a decimal string of credits with exactly 6 decimals: -1500000 -> "-1.500000". */
export function formatCredits(micro: number): string {
  const abs = Math.abs(micro);
  const whole = Math.floor(abs / MICRO_PER_CREDIT);
  const fraction = String(abs % MICRO_PER_CREDIT).padStart(6, '0');
  return `${micro < 0 ? '-' : ''}${whole}.${fraction}`;
}

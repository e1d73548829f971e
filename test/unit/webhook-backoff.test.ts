/** The dispatcher's retry schedule (src/webhooks/dispatcher.ts): pure arithmetic on a given clock. */
import { describe, expect, it } from 'vitest';
import { afterFailure, MAX_RETRY_DELAY_MS, retryDelayMs } from '../../src/webhooks/dispatcher.js';

describe('webhook retry schedule', () => {
  it('doubles from the base, ±20% jitter, capped at an hour', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 30_000, 0.5))).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(retryDelayMs(1, 30_000, 0)).toBe(24_000);
    expect(retryDelayMs(1, 30_000, 0.999999)).toBeLessThanOrEqual(36_000);
    expect(retryDelayMs(20, 30_000, 0.5)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(10_000, 30_000, 0.5)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('retries within the window from the first attempt, the last one at its end, then fails', () => {
    const settings = { retryBaseMs: 60_000, retryForMs: 3_600_000 };
    expect(afterFailure(1, 0, 1000, settings, 0.5)).toEqual({ status: 'pending', nextAttemptMs: 61_000 });
    expect(afterFailure(6, 0, 3_000_000, settings, 0.5)).toEqual({ status: 'pending', nextAttemptMs: 3_600_000 });
    expect(afterFailure(7, 0, 3_600_000, settings, 0.5)).toEqual({ status: 'failed' });
  });
});

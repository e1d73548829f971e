/**
 * `burst_allowance.duration`: a number of seconds, or a duration string as the spec writes them,
 * stored as seconds; events written with numbers read as they always did.
 */
import { describe, expect, it } from 'vitest';
import { burstDurationSeconds, CreateKeyRequest, policyFrom } from '../../src/api/routes/keys.js';
import { ApiKeyEvent } from '../../src/commands/keys/events.js';
import { BadRequestError } from '../../src/errors.js';

const input = (duration: unknown) => CreateKeyRequest.safeParse({ name: 'k', user_id: 'u', rate_limits: { burst_allowance: { multiplier: 2, duration } } });

describe('burst_allowance.duration', () => {
  it('takes seconds, and durations in ms, s, m and h, alone or combined', () => {
    expect([30, '30s', '2m', '1h', '1m30s', '1h1s', '30000ms', '1m500ms500ms'].map(burstDurationSeconds)).toEqual([30, 30, 120, 3600, 90, 3601, 30, 61]);
  });

  it('refuses other strings and non-positive values with the field named', () => {
    for (const duration of ['30', '30 s', '1.5m', '1d', 's', '-30s', '', 0, -1, 1.5]) {
      const parsed = input(duration);
      expect(parsed.success, String(duration)).toBe(false);
      expect(parsed.error!.issues[0]!.path, String(duration)).toEqual(['rate_limits', 'burst_allowance', 'duration']);
    }
    for (const duration of ['1500ms', '0s', '0m0s']) {
      expect(input(duration).success).toBe(true);
      expect(() => burstDurationSeconds(duration)).toThrow(BadRequestError);
      try {
        burstDurationSeconds(duration);
      } catch (error) {
        expect((error as BadRequestError).param).toBe('rate_limits.burst_allowance.duration');
      }
    }
  });

  it('stores seconds, and events written with seconds still read', () => {
    const parsed = input('2m');
    expect(parsed.success).toBe(true);
    const policy = policyFrom(parsed.data!);
    expect(policy.rate_limits.burst_allowance).toEqual({ multiplier: 2, duration: 120 });
    const event = { type: 'ApiKeyCreated', data: { key_id: 'key_1', name: 'k', user_id: 'u', key_hash: 'h', key_prefix: 'sk-ab', policy } };
    expect(ApiKeyEvent.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
    expect(ApiKeyEvent.safeParse({ ...event, data: { ...event.data, policy: { ...policy, rate_limits: { ...policy.rate_limits, burst_allowance: { multiplier: 2, duration: '2m' } } } } }).success).toBe(false);
  });
});

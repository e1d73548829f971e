/** Usage events as the projections read them: parsed and fingerprinted once per event object; the request row's buckets. */
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import type { UsageData } from '../../src/commands/usage/events.js';
import { usageFingerprint } from '../../src/billing/rating.js';
import type { StoredEvent } from '../../src/ports/event-store.js';
import { requireUsageEvent, usageEventOf } from '../../src/projections/usage-events.js';
import { dayOf, hourOf, isCanonicalInstant, usageRow } from '../../src/projections/usage.js';

const usage: UsageData = {
  request_id: 'req-1',
  tenant_id: 't1',
  user_id: 'u1',
  key_id: null,
  channel_id: 'ch',
  provider: 'openai',
  model_requested: 'm',
  model_served: 'm',
  prompt_tokens: 3,
  completion_tokens: 4,
  total_tokens: 7,
  usage_source: 'upstream',
  stream: false,
  status: 200,
  error_code: null,
  latency_ms: 12.34,
  ttft_ms: null,
  attempts: 1,
  started_at: '2024-05-01T10:20:30.456Z',
};
const stored = (data: Record<string, unknown>): StoredEvent => ({
  id: 'e1',
  type: 'UsageRecorded',
  stream: 'usage-a',
  version: 1,
  position: 7,
  tenant_id: 't1',
  occurred_at: '2024-05-01T11:00:00.000Z',
  schema_version: 1,
  causation_id: null,
  correlation_id: null,
  data,
});

describe('usageEventOf', () => {
  it('parses and fingerprints an event once, whoever asks', () => {
    const event = stored({ ...usage, unknown_field: 1 });
    const first = usageEventOf(event)!;
    expect(first.usage).toEqual(usage);
    expect(first.fingerprint).toBe(usageFingerprint(usage));
    expect(first.fingerprint).toBe(first.fingerprint);
    expect(usageEventOf(event)).toBe(first);
    expect(requireUsageEvent(event)).toBe(first);
    // Another object with the same content is parsed on its own (the cache holds event objects, not values).
    expect(usageEventOf(stored({ ...usage }))).not.toBe(first);
  });

  it('gives null for data that is not usage, and requireUsageEvent throws zod’s error', () => {
    const bad = stored({ ...usage, prompt_tokens: -1 });
    expect(usageEventOf(bad)).toBeNull();
    expect(() => requireUsageEvent(bad)).toThrow(ZodError);
  });
});

describe('usageRow buckets', () => {
  it('cuts hour and day from the start time as hourOf / dayOf compute them, whatever its form', () => {
    const times = [
      '2024-05-01T10:20:30.456Z',
      '2024-05-01T00:00:00.000Z',
      '2024-12-31T23:59:59.999Z',
      '2024-05-01T10:20:30Z',
      '2024-05-01T12:30:00+02:00',
      '2024-05-01',
      '0001-01-01T00:00:00.000Z',
      '0000-02-29T00:00:00.000Z',
      '2024-02-29T10:00:00.000Z',
      '2023-02-29T10:00:00.000Z',
      '2024-02-30T00:00:00.000Z',
      '1900-02-29T00:00:00.000Z',
      '2000-02-29T00:00:00.000Z',
      '2024-04-31T00:00:00.000Z',
      '2024-00-10T00:00:00.000Z',
      '2024-05-00T00:00:00.000Z',
      '2024-05-01T24:00:00.000Z',
      '2024-05-01T23:60:00.000Z',
      '2024-05-01T23:59:60.000Z',
      '+010000-01-01T05:00:00.000Z',
      'not a time',
    ];
    for (const started_at of times) {
      const row = usageRow({ ...usage, started_at }, stored(usage));
      const expected = Number.isNaN(Date.parse(started_at)) ? '2024-05-01T11:00:00.000Z' : new Date(started_at).toISOString();
      expect(row.started_at, started_at).toBe(expected);
      expect(row.hour, started_at).toBe(hourOf(expected));
      expect(row.day, started_at).toBe(dayOf(expected));
    }
  });

  it('takes a start time as given exactly when toISOString() would give it back', () => {
    // Every day of four years (a common year, a leap year, 1900 and 2000) at the edges of a day.
    for (const year of [1900, 2000, 2023, 2024]) {
      for (let ms = Date.UTC(year, 0, 1); ms < Date.UTC(year + 1, 0, 1); ms += 86_400_000) {
        for (const time of [ms, ms + 86_399_999]) expect(isCanonicalInstant(new Date(time).toISOString())).toBe(true);
      }
    }
    for (const text of ['2023-02-29T10:00:00.000Z', '2024-02-30T00:00:00.000Z', '1900-02-29T00:00:00.000Z', '2024-05-01T24:00:00.000Z', '2024-05-01T23:59:60.000Z', '2024-13-01T00:00:00.000Z', '2024-05-01T10:20:30Z']) {
      expect(isCanonicalInstant(text), text).toBe(false);
    }
  });
});

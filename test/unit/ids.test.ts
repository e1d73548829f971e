/** Time-ordered UUIDs: valid version 7 UUIDs that sort by the time they were made. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { timeOrderedUuid } from '../../src/ids.js';
import { NewEvent } from '../../src/ports/event-store.js';

describe('timeOrderedUuid', () => {
  it('is a version 7 UUID (RFC 9562) with the millisecond time first, accepted as an event id', () => {
    const at = Date.parse('2026-11-20T12:34:56.789Z');
    const id = timeOrderedUuid(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    expect(z.uuid().safeParse(id).success).toBe(true);
    expect(NewEvent.safeParse({ id, type: 'UsageRecorded', data: {} }).success).toBe(true);
  });

  it('sorts by time across milliseconds and stays unique within one', () => {
    const start = Date.parse('2026-11-20T00:00:00.000Z');
    const ids = Array.from({ length: 1000 }, (_, i) => timeOrderedUuid(start + i));
    expect([...ids].sort()).toEqual(ids);
    const sameMs = Array.from({ length: 10_000 }, () => timeOrderedUuid(start));
    expect(new Set(sameMs).size).toBe(sameMs.length);
  });

  it('defaults to the current time', () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    const time = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});

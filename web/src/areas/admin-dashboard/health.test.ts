import { describe, expect, it } from 'vitest';
import { byUrgency, healthCounts, healthState } from './health';

const now = Date.parse('2026-11-28T12:00:00.000Z');
const ch = (name: string, enabled: boolean, healthy: boolean, cooldown: string | null = null) => ({ name, enabled, health: { healthy, cooldown_until: cooldown, reason: null } });

describe('channel health', () => {
  it('tells off, healthy, cooling and unhealthy apart', () => {
    expect(healthState(ch('a', false, false), now)).toBe('off');
    expect(healthState(ch('a', true, true), now)).toBe('healthy');
    expect(healthState(ch('a', true, true, '2026-11-28T11:59:00.000Z'), now)).toBe('healthy');
    expect(healthState(ch('a', true, false, '2026-11-28T12:01:00.000Z'), now)).toBe('cooling');
    expect(healthState(ch('a', true, false), now)).toBe('unhealthy');
  });
  it('lists the urgent first and counts the healthy enabled ones', () => {
    const list = [ch('z', true, true), ch('off', false, true), ch('b', true, false), ch('a', true, true)];
    expect(byUrgency(list, now).map((c) => c.name)).toEqual(['b', 'a', 'z', 'off']);
    expect(healthCounts(list, now)).toEqual({ healthy: 2, total: 3 });
  });
});

/** A channel's health at a glance, from GET /v1/admin/channels (pure: the dashboard's badges). */
export interface ChannelHealth {
  enabled: boolean;
  health: { healthy: boolean; cooldown_until: string | null; reason: string | null };
}

export type HealthState = 'off' | 'healthy' | 'cooling' | 'unhealthy';

/**
 * Disabled channels are "off" whatever their health; a healthy one whose cooldown is still running
 * (after failures the relay skips it until then) is "cooling"; else healthy or unhealthy.
 */
export function healthState(channel: ChannelHealth, now: number): HealthState {
  if (!channel.enabled) return 'off';
  const cooling = channel.health.cooldown_until !== null && Date.parse(channel.health.cooldown_until) > now;
  if (!channel.health.healthy) return cooling ? 'cooling' : 'unhealthy';
  return cooling ? 'cooling' : 'healthy';
}

/** Unhealthy first, then cooling, healthy, off; by name within each. */
export function byUrgency<T extends ChannelHealth & { name: string }>(channels: readonly T[], now: number): T[] {
  const rank: Record<HealthState, number> = { unhealthy: 0, cooling: 1, healthy: 2, off: 3 };
  return [...channels].sort((a, b) => rank[healthState(a, now)] - rank[healthState(b, now)] || a.name.localeCompare(b.name));
}

/** Enabled channels and how many of them are healthy. */
export function healthCounts(channels: readonly ChannelHealth[], now: number): { healthy: number; total: number } {
  const enabled = channels.filter((c) => c.enabled);
  return { healthy: enabled.filter((c) => healthState(c, now) === 'healthy').length, total: enabled.length };
}

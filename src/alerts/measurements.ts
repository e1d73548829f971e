/**
 * What each alert kind measures, as pure functions of inputs gathered at the edge
 * (src/alerts/sources.ts reads the read models, the counters and the projectors): each answers the
 * value compared with the rule's threshold, a one-line message and the details behind it. And the
 * judgement: a rule fires when its value is ABOVE its threshold (so threshold 0 on a count means
 * "any") and it is not firing; it resolves when the value is back at or below the threshold.
 */
import type { AlertKind } from '../commands/alerts/events.js';
import type { Measured } from '../commands/alerts/decider.js';

export interface RuleUnderTest {
  name: string;
  kind: AlertKind;
  threshold: number;
  /** Seconds. */
  window: number;
  firing: boolean;
}

export type Verdict = 'fire' | 'resolve' | null;

export function judge(rule: Pick<RuleUnderTest, 'threshold' | 'firing'>, value: number): Verdict {
  const holds = value > rule.threshold;
  if (holds && !rule.firing) return 'fire';
  if (!holds && rule.firing) return 'resolve';
  return null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const windowText = (seconds: number) => (seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** relay_error_rate: failed share (status >= 500 or an upstream error) of the tenant's relay requests; no requests = 0. */
export function relayErrorRate(rule: RuleUnderTest, counts: { requests: number; errors: number }): Measured {
  const value = counts.requests === 0 ? 0 : counts.errors / counts.requests;
  return {
    value,
    message: `${rule.name}: ${round(value * 100, 1)}% of relay requests failed in the last ${windowText(rule.window)} (${counts.errors} of ${counts.requests}; threshold ${round(rule.threshold * 100, 1)}%)`,
    details: { requests: counts.requests, errors: counts.errors, window_seconds: rule.window },
  };
}

/** Where the p95 sits in `n` latencies sorted ascending (nearest rank); null when there are none. */
export function p95Offset(n: number): number | null {
  return n === 0 ? null : Math.ceil(0.95 * n) - 1;
}

/** p95_latency in ms: the nearest-rank 95th percentile of the window's latencies; no requests = 0. */
export function p95Latency(rule: RuleUnderTest, sample: { requests: number; p95Us: number | null }): Measured {
  const value = sample.p95Us === null ? 0 : round(sample.p95Us / 1000, 3);
  return {
    value,
    message: `${rule.name}: p95 relay latency ${value} ms over ${plural(sample.requests, 'request')} in the last ${windowText(rule.window)} (threshold ${rule.threshold} ms)`,
    details: { requests: sample.requests, p95_ms: value, window_seconds: rule.window },
  };
}

/** channel_unhealthy: the tenant's enabled channels marked unhealthy now. */
export function channelUnhealthy(rule: RuleUnderTest, channels: ReadonlyArray<{ id: string; name: string; enabled: boolean; healthy: boolean; reason: string | null }>): Measured {
  const down = channels.filter((c) => c.enabled && !c.healthy);
  const names = down.map((c) => c.name);
  return {
    value: down.length,
    message: `${rule.name}: ${plural(down.length, 'channel')} unhealthy${names.length > 0 ? ` (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''})` : ''}`,
    details: { unhealthy: down.slice(0, 50).map((c) => ({ id: c.id, name: c.name, reason: c.reason })), channels: channels.length },
  };
}

/** no_available_channels: requests answered no_available_channels in the window, by model. */
export function noAvailableChannels(rule: RuleUnderTest, byModel: ReadonlyArray<{ model: string; requests: number }>): Measured {
  const value = byModel.reduce((sum, m) => sum + m.requests, 0);
  const models = [...byModel].sort((a, b) => b.requests - a.requests || a.model.localeCompare(b.model));
  return {
    value,
    message: `${rule.name}: ${plural(value, 'request')} found no available channel in the last ${windowText(rule.window)}${models.length > 0 ? ` (${models.slice(0, 5).map((m) => m.model).join(', ')})` : ''}`,
    details: { models: models.slice(0, 50), window_seconds: rule.window },
  };
}

/** quota_exhausted: requests refused for an exhausted key or user quota (insufficient_quota) in the window. */
export function quotaExhausted(rule: RuleUnderTest, refusals: { requests: number; keys: number; users: number }): Measured {
  return {
    value: refusals.requests,
    message: `${rule.name}: ${plural(refusals.requests, 'request')} refused for exhausted quota in the last ${windowText(rule.window)} (${plural(refusals.keys, 'key')}, ${plural(refusals.users, 'user')})`,
    details: { requests: refusals.requests, keys: refusals.keys, users: refusals.users, window_seconds: rule.window },
  };
}

/** failed_logins: failed logins of the tenant's users in the window (the counters port's sliding window). */
export function failedLogins(rule: RuleUnderTest, failures: number): Measured {
  return {
    value: failures,
    message: `${rule.name}: ${plural(failures, 'failed login')} in the last ${windowText(rule.window)}`,
    details: { failures, window_seconds: rule.window },
  };
}

/** projection_lag: commits the furthest-behind projection is from the head of the log (installation-wide). */
export function projectionLag(rule: RuleUnderTest, projections: ReadonlyArray<{ name: string; lag: number }>): Measured {
  let worst: { name: string; lag: number } | null = null;
  for (const p of projections) if (!worst || p.lag > worst.lag) worst = p;
  const value = worst?.lag ?? 0;
  return {
    value,
    message: `${rule.name}: projection ${worst?.name ?? '(none)'} is ${plural(value, 'commit')} behind the log`,
    details: { projections: projections.filter((p) => p.lag > 0).map((p) => ({ name: p.name, lag: p.lag })) },
  };
}

/** spool_backlog: usage events waiting for the bus, summed over the instances that reported lately. */
export function spoolBacklog(rule: RuleUnderTest, instances: ReadonlyArray<{ instance: string; depth: number }>): Measured {
  const value = instances.reduce((sum, i) => sum + i.depth, 0);
  return {
    value,
    message: `${rule.name}: ${plural(value, 'usage event')} waiting for the bus on ${plural(instances.filter((i) => i.depth > 0).length, 'instance')}`,
    details: { instances: instances.filter((i) => i.depth > 0).map((i) => ({ instance: i.instance, depth: i.depth })), reporting: instances.length },
  };
}

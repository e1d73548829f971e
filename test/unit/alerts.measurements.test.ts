/** The alert kinds' measurements and the fire/resolve judgement: pure functions. */
import { describe, expect, it } from 'vitest';
import * as m from '../../src/alerts/measurements.js';

const rule = (kind: m.RuleUnderTest['kind'], threshold: number, window = 300): m.RuleUnderTest => ({ name: 'R', kind, threshold, window, firing: false });

describe('alert judgement', () => {
  it('fires above the threshold when not firing, resolves at or below it when firing', () => {
    expect(m.judge({ threshold: 0.2, firing: false }, 0.21)).toBe('fire');
    expect(m.judge({ threshold: 0.2, firing: false }, 0.2)).toBeNull();
    expect(m.judge({ threshold: 0.2, firing: true }, 0.5)).toBeNull();
    expect(m.judge({ threshold: 0.2, firing: true }, 0.2)).toBe('resolve');
    expect(m.judge({ threshold: 0, firing: false }, 1)).toBe('fire');
  });
});

describe('measurements', () => {
  it('relay_error_rate: the failed share; no requests is 0', () => {
    expect(m.relayErrorRate(rule('relay_error_rate', 0.1), { requests: 8, errors: 2 })).toEqual({
      value: 0.25,
      message: 'R: 25% of relay requests failed in the last 5 min (2 of 8; threshold 10%)',
      details: { requests: 8, errors: 2, window_seconds: 300 },
    });
    expect(m.relayErrorRate(rule('relay_error_rate', 0.1, 3600), { requests: 0, errors: 0 })).toMatchObject({ value: 0, message: expect.stringContaining('last 1 h') });
  });

  it('p95_latency: nearest rank, in ms', () => {
    expect(m.p95Offset(0)).toBeNull();
    expect(m.p95Offset(1)).toBe(0);
    expect(m.p95Offset(20)).toBe(18);
    expect(m.p95Offset(21)).toBe(19);
    expect(m.p95Offset(100)).toBe(94);
    expect(m.p95Latency(rule('p95_latency', 1000, 45), { requests: 20, p95Us: 1_234_567 })).toMatchObject({ value: 1234.567, details: { requests: 20, p95_ms: 1234.567 }, message: expect.stringContaining('last 45 s') });
    expect(m.p95Latency(rule('p95_latency', 1000), { requests: 0, p95Us: null }).value).toBe(0);
  });

  it('channel_unhealthy: enabled channels marked unhealthy', () => {
    const measured = m.channelUnhealthy(rule('channel_unhealthy', 0), [
      { id: 'c1', name: 'a', enabled: true, healthy: false, reason: '3 failures' },
      { id: 'c2', name: 'b', enabled: false, healthy: false, reason: null },
      { id: 'c3', name: 'c', enabled: true, healthy: true, reason: null },
    ]);
    expect(measured).toEqual({ value: 1, message: 'R: 1 channel unhealthy (a)', details: { unhealthy: [{ id: 'c1', name: 'a', reason: '3 failures' }], channels: 3 } });
  });

  it('no_available_channels: summed, models named by count', () => {
    const measured = m.noAvailableChannels(rule('no_available_channels', 0), [
      { model: 'b', requests: 1 },
      { model: 'a', requests: 3 },
    ]);
    expect(measured.value).toBe(4);
    expect(measured.message).toBe('R: 4 requests found no available channel in the last 5 min (a, b)');
  });

  it('quota_exhausted, failed_logins', () => {
    expect(m.quotaExhausted(rule('quota_exhausted', 0), { requests: 3, keys: 1, users: 2 })).toMatchObject({ value: 3, message: 'R: 3 requests refused for exhausted quota in the last 5 min (1 key, 2 users)' });
    expect(m.failedLogins(rule('failed_logins', 2, 60), 3)).toEqual({ value: 3, message: 'R: 3 failed logins in the last 1 min', details: { failures: 3, window_seconds: 60 } });
  });

  it('projection_lag: the worst projection; spool_backlog: the sum over instances', () => {
    expect(m.projectionLag(rule('projection_lag', 10), [{ name: 'usage', lag: 3 }, { name: 'billing', lag: 12 }, { name: 'files', lag: 0 }])).toEqual({
      value: 12,
      message: 'R: projection billing is 12 commits behind the log',
      details: { projections: [{ name: 'usage', lag: 3 }, { name: 'billing', lag: 12 }] },
    });
    expect(m.projectionLag(rule('projection_lag', 10), []).value).toBe(0);
    expect(m.spoolBacklog(rule('spool_backlog', 100), [{ instance: 'a', depth: 150 }, { instance: 'b', depth: 0 }, { instance: 'c', depth: 7 }])).toEqual({
      value: 157,
      message: 'R: 157 usage events waiting for the bus on 2 instances',
      details: { instances: [{ instance: 'a', depth: 150 }, { instance: 'c', depth: 7 }], reporting: 3 },
    });
  });
});

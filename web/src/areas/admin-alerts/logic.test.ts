import { describe, expect, it } from 'vitest';
import { ALERT_KINDS, durationText, emptyRuleForm, eventsBody, KIND_SPECS, ruleBody, RuleFormError, ruleToForm, valueText, WEBHOOK_EVENTS, type AlertRule } from './logic';

const problem = (f: () => unknown) => {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof RuleFormError ? `${e.field}:${e.problem}` : String(e);
  }
};

describe('alert rule form per kind', () => {
  it('sends a share as 0..1 from the percentage typed', () => {
    expect(ruleBody({ ...emptyRuleForm(), name: ' Errors ', threshold: '12.5', window: '600', severity: 'critical', notify: ['wh_1'] })).toEqual({
      name: 'Errors',
      condition: { kind: 'relay_error_rate', threshold: 0.125, window: 600 },
      severity: 'critical',
      notify: ['wh_1'],
      enabled: true,
    });
    expect(ruleBody({ ...emptyRuleForm(), name: 'x', threshold: '7' }).condition.threshold).toBe(0.07);
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: 'x', threshold: '101' }))).toBe('threshold:percent');
  });

  it('takes milliseconds for latency and whole numbers for counts', () => {
    expect(ruleBody({ ...emptyRuleForm(), name: 'slow', kind: 'p95_latency', threshold: '850.5', window: '60' }).condition).toEqual({ kind: 'p95_latency', threshold: 850.5, window: 60 });
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: 'x', kind: 'failed_logins', threshold: '2.5' }))).toBe('threshold:whole');
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: 'x', kind: 'quota_exhausted', threshold: '' }))).toBe('threshold:notNumber');
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: '  ', threshold: '1' }))).toBe('name:required');
  });

  it('checks the window where the kind uses one (failed logins: a day at most) and sends a placeholder where not', () => {
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: 'x', kind: 'failed_logins', threshold: '3', window: String(2 * 86400) }))).toBe('window:windowRange');
    expect(problem(() => ruleBody({ ...emptyRuleForm(), name: 'x', threshold: '3', window: '0' }))).toBe('window:windowRange');
    expect(ruleBody({ ...emptyRuleForm(), name: 'x', kind: 'channel_unhealthy', threshold: '0', window: 'whatever' }).condition).toEqual({ kind: 'channel_unhealthy', threshold: 0, window: 60 });
    for (const kind of ALERT_KINDS) expect(KIND_SPECS[kind]).toBeDefined();
  });

  it('reads a rule back into the form (shares as percentages)', () => {
    const rule: AlertRule = { id: 'r', name: 'E', condition: { kind: 'relay_error_rate', threshold: 0.07, window: 600 }, severity: 'info', notify: ['a'], enabled: false, state: 'ok', firing: null };
    expect(ruleToForm(rule)).toEqual({ name: 'E', kind: 'relay_error_rate', threshold: '7', window: '600', severity: 'info', notify: ['a'], enabled: false });
    expect(ruleBody(ruleToForm(rule))).toEqual({ name: 'E', condition: rule.condition, severity: 'info', notify: ['a'], enabled: false });
  });

  it('shows values in the kind unit, durations, and webhook events', () => {
    expect(valueText('relay_error_rate', 0.5)).toBe('50%');
    expect(valueText('p95_latency', 301.4)).toBe('301 ms');
    expect(valueText('failed_logins', 3)).toBe('3');
    expect(durationText(90)).toBe('1m 30s');
    expect(durationText(86400)).toBe('1d');
    expect(eventsBody(['key.created', 'alert.fired'])).toEqual(['alert.fired', 'key.created']);
    expect(eventsBody([...WEBHOOK_EVENTS])).toEqual(['*']);
    expect(eventsBody(['*', 'key.created'])).toEqual(['*']);
  });
});

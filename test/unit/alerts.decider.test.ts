/** Given / when / then over the alert rule decider: pure, no I/O. */
import { describe, expect, it } from 'vitest';
import { alertRules, type Measured } from '../../src/commands/alerts/decider.js';
import type { AlertRuleEvent, AlertRuleFields } from '../../src/commands/alerts/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(alertRules);
const AT = '2026-01-01T00:00:00.000Z';
const fields: AlertRuleFields = {
  name: 'Errors',
  condition: { kind: 'relay_error_rate', threshold: 0.2, window: 300 },
  severity: 'critical',
  notify: ['wh_1'],
  enabled: true,
};
const created: AlertRuleEvent = { type: 'AlertRuleCreated', data: { ...fields, rule_id: 'r1', by: 'u1' } };
const measured: Measured = { value: 0.5, message: 'Errors: 50% of relay requests failed', details: { requests: 10, errors: 5 } };
const fired: AlertRuleEvent = {
  type: 'AlertFired',
  data: {
    alert_id: 'a1',
    rule_id: 'r1',
    rule_name: 'Errors',
    kind: 'relay_error_rate',
    severity: 'critical',
    value: 0.5,
    threshold: 0.2,
    window: 300,
    notify: ['wh_1'],
    message: measured.message,
    details: measured.details,
    fired_at: AT,
  },
};
const resolvedAs = (reason: 'condition_cleared' | 'rule_disabled' | 'rule_changed' | 'rule_deleted', value: number, message: string): AlertRuleEvent => ({
  type: 'AlertResolved',
  data: { alert_id: 'a1', rule_id: 'r1', rule_name: 'Errors', kind: 'relay_error_rate', severity: 'critical', value, threshold: 0.2, notify: ['wh_1'], message, reason, resolved_at: AT },
});

describe('alert rule decider', () => {
  it('creates a rule (name trimmed)', () => {
    spec.given([]).when({ type: 'CreateAlertRule', ruleId: 'r1', fields: { ...fields, name: '  Errors ' }, by: 'u1' }).then([created]);
  });

  it('refuses a second creation and invalid rules, with codes', () => {
    spec.given([created]).when({ type: 'CreateAlertRule', ruleId: 'r1', fields, by: null }).thenThrows(DomainError, { code: 'alert_rule_exists' });
    const create = (f: Partial<AlertRuleFields>) => spec.given([]).when({ type: 'CreateAlertRule', ruleId: 'r1', fields: { ...fields, ...f }, by: null });
    create({ name: '   ' }).thenThrows(DomainError, { code: 'invalid_name' });
    create({ condition: { kind: 'relay_error_rate', threshold: 1.5, window: 60 } }).thenThrows(DomainError, { code: 'invalid_threshold' });
    create({ condition: { kind: 'failed_logins', threshold: 2.5, window: 60 } }).thenThrows(DomainError, { code: 'invalid_threshold' });
    create({ condition: { kind: 'p95_latency', threshold: 1500.5, window: 8 * 24 * 3600 } }).thenThrows(DomainError, { code: 'invalid_window' });
    create({ condition: { kind: 'failed_logins', threshold: 3, window: 2 * 24 * 3600 } }).thenThrows(DomainError, { code: 'invalid_window' });
    create({ notify: ['not a webhook id'] }).thenThrows(DomainError, { code: 'invalid_notify' });
    create({ notify: ['wh_1', 'wh_1'] }).thenThrows(DomainError, { code: 'invalid_notify' });
    create({ condition: { kind: 'p95_latency', threshold: 1500.5, window: 60 } }).then([
      { type: 'AlertRuleCreated', data: { ...fields, condition: { kind: 'p95_latency', threshold: 1500.5, window: 60 }, rule_id: 'r1', by: null } },
    ]);
  });

  it('updates only what changed; nothing when nothing changed', () => {
    spec.given([created]).when({ type: 'UpdateAlertRule', changes: { name: 'Errors', severity: 'warning', notify: ['wh_1'] }, by: 'u2', at: AT }).then([
      { type: 'AlertRuleUpdated', data: { severity: 'warning', by: 'u2' } },
    ]);
    spec.given([created]).when({ type: 'UpdateAlertRule', changes: { ...fields }, by: 'u2', at: AT }).thenNothingHappened();
    spec.given([created]).when({ type: 'UpdateAlertRule', changes: { condition: { kind: 'relay_error_rate', threshold: 2, window: 60 } }, by: null, at: AT }).thenThrows(DomainError, { code: 'invalid_threshold' });
  });

  it('refuses to change or delete a missing or deleted rule', () => {
    const deleted: AlertRuleEvent = { type: 'AlertRuleDeleted', data: { by: null } };
    spec.given([]).when({ type: 'UpdateAlertRule', changes: { enabled: false }, by: null, at: AT }).thenThrows(NotFoundError, { code: 'alert_rule_not_found' });
    spec.given([created, deleted]).when({ type: 'DeleteAlertRule', by: null, at: AT }).thenThrows(NotFoundError, { code: 'alert_rule_not_found' });
  });

  it('fires once, against the version it measured', () => {
    spec.given([created]).when({ type: 'FireAlert', alertId: 'a1', basedOn: 1, measured, at: AT }).then([fired]);
    // Already firing, or the rule changed since it was measured: nothing.
    spec.given([created, fired]).when({ type: 'FireAlert', alertId: 'a2', basedOn: 2, measured, at: AT }).thenNothingHappened();
    spec.given([created, { type: 'AlertRuleUpdated', data: { name: 'x', by: null } }]).when({ type: 'FireAlert', alertId: 'a1', basedOn: 1, measured, at: AT }).thenNothingHappened();
    spec.given([created, { type: 'AlertRuleUpdated', data: { enabled: false, by: null } }]).when({ type: 'FireAlert', alertId: 'a1', basedOn: 2, measured, at: AT }).thenNothingHappened();
    spec.given([]).when({ type: 'FireAlert', alertId: 'a1', basedOn: 0, measured, at: AT }).thenNothingHappened();
  });

  it('resolves when the condition cleared, only while firing', () => {
    const cleared = { value: 0, message: 'Errors: resolved', details: {} };
    spec.given([created, fired]).when({ type: 'ResolveAlert', basedOn: 2, measured: cleared, at: AT }).then([resolvedAs('condition_cleared', 0, 'Errors: resolved')]);
    spec.given([created]).when({ type: 'ResolveAlert', basedOn: 1, measured: cleared, at: AT }).thenNothingHappened();
    spec.given([created, fired]).when({ type: 'ResolveAlert', basedOn: 1, measured: cleared, at: AT }).thenNothingHappened();
  });

  it('resolves a firing rule that is disabled, changed or deleted, before the change', () => {
    spec.given([created, fired]).when({ type: 'UpdateAlertRule', changes: { enabled: false }, by: 'u1', at: AT }).then([
      resolvedAs('rule_disabled', 0.5, 'Errors: resolved (rule disabled)'),
      { type: 'AlertRuleUpdated', data: { enabled: false, by: 'u1' } },
    ]);
    spec.given([created, fired]).when({ type: 'UpdateAlertRule', changes: { condition: { kind: 'relay_error_rate', threshold: 0.6, window: 300 } }, by: 'u1', at: AT }).then([
      resolvedAs('rule_changed', 0.5, 'Errors: resolved (condition changed)'),
      { type: 'AlertRuleUpdated', data: { condition: { kind: 'relay_error_rate', threshold: 0.6, window: 300 }, by: 'u1' } },
    ]);
    // A new name or severity keeps the alert open.
    spec.given([created, fired]).when({ type: 'UpdateAlertRule', changes: { severity: 'info' }, by: 'u1', at: AT }).then([{ type: 'AlertRuleUpdated', data: { severity: 'info', by: 'u1' } }]);
    spec.given([created, fired]).when({ type: 'DeleteAlertRule', by: 'u1', at: AT }).then([resolvedAs('rule_deleted', 0.5, 'Errors: resolved (rule deleted)'), { type: 'AlertRuleDeleted', data: { by: 'u1' } }]);
    spec.given([created]).when({ type: 'DeleteAlertRule', by: 'u1', at: AT }).then([{ type: 'AlertRuleDeleted', data: { by: 'u1' } }]);
  });

  it('folds history into state', () => {
    expect(spec.given([created, fired]).state).toEqual({ exists: true, ruleId: 'r1', deleted: false, fields, firing: { alertId: 'a1', value: 0.5, firedAt: AT }, version: 2 });
    expect(spec.given([created, fired, resolvedAs('condition_cleared', 0, 'x')]).state).toMatchObject({ firing: null, version: 3 });
  });
});

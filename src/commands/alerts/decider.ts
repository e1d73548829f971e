/**
 * Alert rules (issue 19): one aggregate `alertrule-<id>` per rule, of its tenant. The rule's
 * configuration and its firing state are one fold, so the evaluator's AlertFired / AlertResolved
 * are decided against the rule as it is in the log: a rule changed, disabled or deleted since it
 * was measured fires nothing (`basedOn` no longer matches), and two evaluators racing on the same
 * rule append once (the loser's append conflicts, it decides again on the fresh history and finds
 * nothing to do).
 *
 * A rule that is disabled, whose condition changes, or that is deleted while firing resolves in
 * the same commit (AlertResolved first, about the rule as it fired), so no alert stays open on a
 * rule that no longer watches it.
 */
import { DomainError, NotFoundError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { AlertRuleEvent, type AlertCondition, type AlertKind, type AlertRuleFields } from './events.js';

/** Longest window a rule may look back: the usage read model answers it with one index range. */
export const MAX_WINDOW_SECONDS = 7 * 24 * 3600;
/** failed_logins are counted in a sliding window of the counters port that keeps at most a day. */
export const MAX_FAILED_LOGINS_WINDOW_SECONDS = 24 * 3600;
export const MAX_NOTIFY = 20;
/** Webhook ids as stream ids (`webhook-<id>`): the webhooks aggregate's own format. */
const WEBHOOK_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface AlertFiring {
  alertId: string;
  value: number;
  firedAt: string;
}

export interface AlertRuleState {
  exists: boolean;
  ruleId: string | null;
  deleted: boolean;
  fields: AlertRuleFields | null;
  firing: AlertFiring | null;
  /** Events folded: the stream's version. */
  version: number;
}

/** What was measured, as the evaluator reports it. */
export interface Measured {
  value: number;
  message: string;
  details: Record<string, unknown>;
}

export type AlertRuleCommand =
  | { type: 'CreateAlertRule'; ruleId: string; fields: AlertRuleFields; by: string | null }
  | { type: 'UpdateAlertRule'; changes: Partial<AlertRuleFields>; by: string | null; at: string }
  | { type: 'DeleteAlertRule'; by: string | null; at: string }
  /** `basedOn`: the rule's version the measurement was made against. */
  | { type: 'FireAlert'; alertId: string; basedOn: number; measured: Measured; at: string }
  | { type: 'ResolveAlert'; basedOn: number; measured: Measured; at: string };

const COUNT_KINDS: ReadonlySet<AlertKind> = new Set(['channel_unhealthy', 'no_available_channels', 'quota_exhausted', 'failed_logins', 'projection_lag', 'spool_backlog']);

/** Checks what the schema cannot say: a share is at most 1, windows are bounded, webhook ids. */
export function validateRule(fields: AlertRuleFields): void {
  if (fields.name.trim() === '') throw new DomainError('name must not be empty', 'invalid_name');
  validateCondition(fields.condition);
  if (fields.notify.length > MAX_NOTIFY) throw new DomainError(`notify takes at most ${MAX_NOTIFY} webhooks`, 'invalid_notify');
  for (const id of fields.notify) if (!WEBHOOK_ID.test(id)) throw new DomainError(`not a webhook id: ${JSON.stringify(id)}`, 'invalid_notify');
  if (new Set(fields.notify).size !== fields.notify.length) throw new DomainError('notify names a webhook twice', 'invalid_notify');
}

function validateCondition(condition: AlertCondition): void {
  const { kind, threshold, window } = condition;
  if (!Number.isFinite(threshold) || threshold < 0) throw new DomainError('threshold must be a number >= 0', 'invalid_threshold');
  if (kind === 'relay_error_rate' && threshold > 1) throw new DomainError('relay_error_rate is a share: its threshold is between 0 and 1', 'invalid_threshold');
  if (COUNT_KINDS.has(kind) && !Number.isInteger(threshold)) throw new DomainError(`${kind} counts: its threshold is a whole number`, 'invalid_threshold');
  const max = kind === 'failed_logins' ? MAX_FAILED_LOGINS_WINDOW_SECONDS : MAX_WINDOW_SECONDS;
  if (!Number.isInteger(window) || window < 1 || window > max) throw new DomainError(`window must be whole seconds between 1 and ${max}`, 'invalid_window');
}

const sameCondition = (a: AlertCondition, b: AlertCondition) => a.kind === b.kind && a.threshold === b.threshold && a.window === b.window;
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function live(state: AlertRuleState): AlertRuleFields {
  if (!state.exists || state.deleted || !state.fields) throw new NotFoundError('alert rule not found', 'alert_rule_not_found');
  return state.fields;
}

type Resolved = Extract<AlertRuleEvent, { type: 'AlertResolved' }>;

function resolution(fields: AlertRuleFields, firing: AlertFiring, reason: Resolved['data']['reason'], value: number, message: string, at: string): Resolved {
  return {
    type: 'AlertResolved',
    data: {
      alert_id: firing.alertId,
      rule_id: '',
      rule_name: fields.name,
      kind: fields.condition.kind,
      severity: fields.severity,
      value,
      threshold: fields.condition.threshold,
      notify: fields.notify,
      message,
      reason,
      resolved_at: at,
    },
  };
}

export const alertRules: Decider<AlertRuleCommand, AlertRuleState, AlertRuleEvent> = {
  category: 'alertrule',
  initialState: { exists: false, ruleId: null, deleted: false, fields: null, firing: null, version: 0 },
  events: AlertRuleEvent,

  decide(command, state) {
    switch (command.type) {
      case 'CreateAlertRule': {
        if (state.exists) throw new DomainError('alert rule already exists', 'alert_rule_exists');
        const fields = { ...command.fields, name: command.fields.name.trim() };
        validateRule(fields);
        return [{ type: 'AlertRuleCreated', data: { ...fields, rule_id: command.ruleId, by: command.by } }];
      }
      case 'UpdateAlertRule': {
        const current = live(state);
        const c = command.changes;
        const changed: Partial<AlertRuleFields> = {};
        if (c.name !== undefined && c.name.trim() !== current.name) changed.name = c.name.trim();
        if (c.condition !== undefined && !sameCondition(c.condition, current.condition)) changed.condition = c.condition;
        if (c.severity !== undefined && c.severity !== current.severity) changed.severity = c.severity;
        if (c.notify !== undefined && !sameList(c.notify, current.notify)) changed.notify = c.notify;
        if (c.enabled !== undefined && c.enabled !== current.enabled) changed.enabled = c.enabled;
        if (Object.keys(changed).length === 0) return [];
        validateRule({ ...current, ...changed });
        const events: AlertRuleEvent[] = [];
        if (state.firing && (changed.enabled === false || changed.condition !== undefined)) {
          const reason = changed.enabled === false ? 'rule_disabled' : 'rule_changed';
          events.push(withRule(resolution(current, state.firing, reason, state.firing.value, `${current.name}: resolved (${reason === 'rule_disabled' ? 'rule disabled' : 'condition changed'})`, command.at), state));
        }
        events.push({ type: 'AlertRuleUpdated', data: { ...changed, by: command.by } });
        return events;
      }
      case 'DeleteAlertRule': {
        const current = live(state);
        const events: AlertRuleEvent[] = [];
        if (state.firing) events.push(withRule(resolution(current, state.firing, 'rule_deleted', state.firing.value, `${current.name}: resolved (rule deleted)`, command.at), state));
        events.push({ type: 'AlertRuleDeleted', data: { by: command.by } });
        return events;
      }
      case 'FireAlert': {
        // Stale measurement, gone or disabled rule, already firing: nothing (the next round decides again).
        if (command.basedOn !== state.version || !state.fields || state.deleted || !state.fields.enabled || state.firing) return [];
        const f = state.fields;
        return [
          {
            type: 'AlertFired',
            data: {
              alert_id: command.alertId,
              rule_id: ruleIdOf(state),
              rule_name: f.name,
              kind: f.condition.kind,
              severity: f.severity,
              value: command.measured.value,
              threshold: f.condition.threshold,
              window: f.condition.window,
              notify: f.notify,
              message: command.measured.message,
              details: command.measured.details,
              fired_at: command.at,
            },
          },
        ];
      }
      case 'ResolveAlert': {
        if (command.basedOn !== state.version || !state.fields || state.deleted || !state.firing) return [];
        return [withRule(resolution(state.fields, state.firing, 'condition_cleared', command.measured.value, command.measured.message, command.at), state)];
      }
    }
  },

  evolve(state, event) {
    const version = state.version + 1;
    switch (event.type) {
      case 'AlertRuleCreated': {
        const { rule_id: ruleId, by: _by, ...fields } = event.data;
        return { ...state, exists: true, ruleId, fields, version };
      }
      case 'AlertRuleUpdated': {
        const { by: _by, ...changed } = event.data;
        return { ...state, fields: state.fields ? { ...state.fields, ...changed } : null, version };
      }
      case 'AlertRuleDeleted':
        return { ...state, deleted: true, version };
      case 'AlertFired':
        return { ...state, firing: { alertId: event.data.alert_id, value: event.data.value, firedAt: event.data.fired_at }, version };
      case 'AlertResolved':
        return { ...state, firing: null, version };
    }
  },
};

const ruleIdOf = (state: AlertRuleState): string => state.ruleId ?? '';

function withRule(event: Resolved, state: AlertRuleState): Resolved {
  return { ...event, data: { ...event.data, rule_id: ruleIdOf(state) } };
}

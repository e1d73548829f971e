/**
 * Alerting read models (migration 0180): `alert_rules` (the live rules of each tenant with their
 * firing state and stream version) and `alerts` (one row per firing). Fed by the alert rule
 * aggregate's events (src/commands/alerts/); the evaluator reads the rules, the admin API both.
 */
import { ALERT_RULE_EVENT_TYPES, AlertRuleEvent } from '../commands/alerts/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

export const ruleIdOf = (stream: string) => stream.slice('alertrule-'.length);

async function applyEvent(trx: ReadModelDb, stored: StoredEvent): Promise<void> {
  // Events this projection cannot read are an error (quarantined), never skipped silently.
  const event = AlertRuleEvent.parse({ type: stored.type, data: stored.data });
  const ruleId = ruleIdOf(stored.stream);
  const touch = { version: stored.version, updated_at: stored.occurred_at };
  const rule = () => trx.updateTable('alert_rules').where('rule_id', '=', ruleId);
  switch (event.type) {
    case 'AlertRuleCreated': {
      const d = event.data;
      await trx
        .insertInto('alert_rules')
        .values({
          rule_id: ruleId,
          tenant_id: stored.tenant_id,
          name: d.name,
          kind: d.condition.kind,
          threshold: d.condition.threshold,
          window_seconds: d.condition.window,
          severity: d.severity,
          notify: JSON.stringify(d.notify),
          enabled: d.enabled ? 1 : 0,
          firing_alert_id: null,
          firing_value: null,
          firing_since: null,
          version: stored.version,
          created_by: d.by,
          created_at: stored.occurred_at,
          updated_at: stored.occurred_at,
        })
        .execute();
      return;
    }
    case 'AlertRuleUpdated': {
      const d = event.data;
      await rule()
        .set({
          ...touch,
          ...(d.name !== undefined && { name: d.name }),
          ...(d.condition !== undefined && { kind: d.condition.kind, threshold: d.condition.threshold, window_seconds: d.condition.window }),
          ...(d.severity !== undefined && { severity: d.severity }),
          ...(d.notify !== undefined && { notify: JSON.stringify(d.notify) }),
          ...(d.enabled !== undefined && { enabled: d.enabled ? 1 : 0 }),
        })
        .execute();
      return;
    }
    case 'AlertRuleDeleted':
      await trx.deleteFrom('alert_rules').where('rule_id', '=', ruleId).execute();
      return;
    case 'AlertFired': {
      const d = event.data;
      await trx
        .insertInto('alerts')
        .values({
          alert_id: d.alert_id,
          tenant_id: stored.tenant_id,
          rule_id: ruleId,
          rule_name: d.rule_name,
          kind: d.kind,
          severity: d.severity,
          state: 'firing',
          value: d.value,
          threshold: d.threshold,
          window_seconds: d.window,
          notify: JSON.stringify(d.notify),
          message: d.message,
          details: JSON.stringify(d.details),
          fired_at: d.fired_at,
          resolved_at: null,
          resolved_value: null,
          resolved_reason: null,
          resolved_message: null,
        })
        .execute();
      await rule().set({ ...touch, firing_alert_id: d.alert_id, firing_value: d.value, firing_since: d.fired_at }).execute();
      return;
    }
    case 'AlertResolved': {
      const d = event.data;
      await trx
        .updateTable('alerts')
        .set({ state: 'resolved', resolved_at: d.resolved_at, resolved_value: d.value, resolved_reason: d.reason, resolved_message: d.message })
        .where('alert_id', '=', d.alert_id)
        .execute();
      await rule().set({ ...touch, firing_alert_id: null, firing_value: null, firing_since: null }).execute();
      return;
    }
  }
}

export const alertsProjection: Projection = {
  name: 'alerts',
  version: 1,
  eventTypes: ALERT_RULE_EVENT_TYPES,
  apply: applyEvent,
  async reset(trx) {
    await trx.deleteFrom('alerts').execute();
    await trx.deleteFrom('alert_rules').execute();
  },
};

/**
 * Events of alerting (issue 19). An alert rule is an aggregate `alertrule-<id>` of its tenant; its
 * firing and resolving are events of the same stream, so the rule's state (firing or not) and its
 * history are one fold.
 */
import { z } from 'zod';

/** What a rule watches. Thresholds and windows mean what each kind's comment says. */
export const ALERT_KINDS = [
  /** share of the tenant's relay requests with status >= 500 (or upstream errors) in the window, 0..1 */
  'relay_error_rate',
  /** p95 of relay request latency in the window, milliseconds */
  'p95_latency',
  /** channels of the tenant unhealthy now (threshold: how many; window unused) */
  'channel_unhealthy',
  /** relay requests answered no_available_channels in the window (any model; details name them) */
  'no_available_channels',
  /** requests refused for an exhausted key or user quota in the window */
  'quota_exhausted',
  /** failed logins in the window */
  'failed_logins',
  /** commits a projection is behind the head of the log (window unused) */
  'projection_lag',
  /** usage events waiting for the bus on all instances (window unused) */
  'spool_backlog',
] as const;
export const AlertKind = z.enum(ALERT_KINDS);
export type AlertKind = z.infer<typeof AlertKind>;

export const AlertSeverity = z.enum(['info', 'warning', 'critical']);
export type AlertSeverity = z.infer<typeof AlertSeverity>;

export const AlertCondition = z.object({
  kind: AlertKind,
  threshold: z.number().nonnegative(),
  /** Seconds the measurement looks back. */
  window: z.number().int().positive(),
});
export type AlertCondition = z.infer<typeof AlertCondition>;

export const AlertRuleFields = z.object({
  name: z.string().min(1).max(200),
  condition: AlertCondition,
  severity: AlertSeverity,
  /** Webhook ids (of the rule's tenant) told when the rule fires and resolves. */
  notify: z.array(z.string()),
  enabled: z.boolean(),
});
export type AlertRuleFields = z.infer<typeof AlertRuleFields>;

export const AlertRuleCreated = z.object({ type: z.literal('AlertRuleCreated'), data: AlertRuleFields.extend({ rule_id: z.string(), by: z.string().nullable() }) });
export const AlertRuleUpdated = z.object({ type: z.literal('AlertRuleUpdated'), data: AlertRuleFields.partial().extend({ by: z.string().nullable() }) });
export const AlertRuleDeleted = z.object({ type: z.literal('AlertRuleDeleted'), data: z.object({ by: z.string().nullable() }) });

/** The condition held at evaluation: `value` measured against the rule's threshold. */
export const AlertFired = z.object({
  type: z.literal('AlertFired'),
  data: z.object({
    /** One id per firing; AlertResolved repeats it. */
    alert_id: z.string(),
    rule_id: z.string(),
    rule_name: z.string(),
    kind: AlertKind,
    severity: AlertSeverity,
    value: z.number(),
    threshold: z.number(),
    window: z.number(),
    /** The rule's webhooks at the time it fired. */
    notify: z.array(z.string()),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
    fired_at: z.string(),
  }),
});

export const AlertResolved = z.object({
  type: z.literal('AlertResolved'),
  data: z.object({
    alert_id: z.string(),
    rule_id: z.string(),
    rule_name: z.string(),
    kind: AlertKind,
    severity: AlertSeverity,
    value: z.number(),
    threshold: z.number(),
    notify: z.array(z.string()),
    message: z.string(),
    /** `condition_cleared`, or the rule was disabled, changed or deleted while firing. */
    reason: z.enum(['condition_cleared', 'rule_disabled', 'rule_changed', 'rule_deleted']),
    resolved_at: z.string(),
  }),
});

export const AlertRuleEvent = z.discriminatedUnion('type', [AlertRuleCreated, AlertRuleUpdated, AlertRuleDeleted, AlertFired, AlertResolved]);
export type AlertRuleEvent = z.infer<typeof AlertRuleEvent>;
export const ALERT_RULE_EVENT_TYPES = ['AlertRuleCreated', 'AlertRuleUpdated', 'AlertRuleDeleted', 'AlertFired', 'AlertResolved'] as const;

/** Alert rule form per kind (what its threshold and window mean) <-> the API's rule; webhook events. */

export const ALERT_KINDS = ['relay_error_rate', 'p95_latency', 'channel_unhealthy', 'no_available_channels', 'quota_exhausted', 'failed_logins', 'projection_lag', 'spool_backlog'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface KindSpec {
  /** share: the form takes a percentage (the API a share 0..1); ms: milliseconds; count: a whole number. */
  unit: 'share' | 'ms' | 'count';
  /** Whether the window means anything for this kind (else the API ignores it). */
  windowUsed: boolean;
  /** The longest window the API takes, seconds. */
  maxWindow: number;
}

const WEEK = 7 * 24 * 3600;
export const KIND_SPECS: Record<AlertKind, KindSpec> = {
  relay_error_rate: { unit: 'share', windowUsed: true, maxWindow: WEEK },
  p95_latency: { unit: 'ms', windowUsed: true, maxWindow: WEEK },
  channel_unhealthy: { unit: 'count', windowUsed: false, maxWindow: WEEK },
  no_available_channels: { unit: 'count', windowUsed: true, maxWindow: WEEK },
  quota_exhausted: { unit: 'count', windowUsed: true, maxWindow: WEEK },
  failed_logins: { unit: 'count', windowUsed: true, maxWindow: 24 * 3600 },
  projection_lag: { unit: 'count', windowUsed: false, maxWindow: WEEK },
  spool_backlog: { unit: 'count', windowUsed: false, maxWindow: WEEK },
};

/** The window sent for kinds that do not use one (the API still wants a valid number). */
const UNUSED_WINDOW = 60;

export interface RuleForm {
  name: string;
  kind: AlertKind;
  /** As typed: a percentage for shares. */
  threshold: string;
  /** Seconds, as typed. */
  window: string;
  severity: Severity;
  notify: string[];
  enabled: boolean;
}

export interface AlertRule {
  id: string;
  name: string;
  condition: { kind: AlertKind; threshold: number; window: number };
  severity: Severity;
  notify: string[];
  enabled: boolean;
  state: 'ok' | 'firing';
  firing: { alert_id: string; value: number; since: string } | null;
}

export const emptyRuleForm = (): RuleForm => ({ name: '', kind: 'relay_error_rate', threshold: '', window: '300', severity: 'warning', notify: [], enabled: true });

/** Thrown for input the form can tell is wrong; `field` names it, `problem` the message to show. */
export class RuleFormError extends Error {
  constructor(
    readonly field: 'name' | 'threshold' | 'window',
    readonly problem: 'required' | 'notNumber' | 'percent' | 'whole' | 'windowRange',
  ) {
    super(`${field}: ${problem}`);
  }
}

// Percent <-> share without float noise (12.5% -> 0.125, 0.07 -> 7).
const round = (n: number) => Math.round(n * 1e9) / 1e9;

export function ruleBody(form: RuleForm) {
  const spec = KIND_SPECS[form.kind];
  if (!form.name.trim()) throw new RuleFormError('name', 'required');
  const typed = form.threshold.trim();
  const value = Number(typed);
  if (typed === '' || !Number.isFinite(value) || value < 0) throw new RuleFormError('threshold', 'notNumber');
  if (spec.unit === 'share' && value > 100) throw new RuleFormError('threshold', 'percent');
  if (spec.unit === 'count' && !Number.isInteger(value)) throw new RuleFormError('threshold', 'whole');
  let window = UNUSED_WINDOW;
  if (spec.windowUsed) {
    window = Number(form.window.trim());
    if (!Number.isInteger(window) || window < 1 || window > spec.maxWindow) throw new RuleFormError('window', 'windowRange');
  }
  const threshold = spec.unit === 'share' ? round(value / 100) : value;
  return { name: form.name.trim(), condition: { kind: form.kind, threshold, window }, severity: form.severity, notify: form.notify, enabled: form.enabled };
}

export function ruleToForm(rule: AlertRule): RuleForm {
  const { kind, threshold, window } = rule.condition;
  return {
    name: rule.name,
    kind,
    threshold: String(KIND_SPECS[kind].unit === 'share' ? round(threshold * 100) : threshold),
    window: String(window),
    severity: rule.severity,
    notify: [...rule.notify],
    enabled: rule.enabled,
  };
}

/** A measured value or threshold in the kind's unit, for tables: "12.5%", "850 ms", "3". */
export function valueText(kind: AlertKind, value: number): string {
  const unit = KIND_SPECS[kind].unit;
  if (unit === 'share') return `${round(value * 100)}%`;
  if (unit === 'ms') return `${Math.round(value)} ms`;
  return String(value);
}

/** Seconds as a short duration: 90 -> "1m 30s", 3600 -> "1h". */
export function durationText(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [size, label] of [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'm'],
    [1, 's'],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${label}`);
      rest %= size;
    }
  }
  return parts.join(' ') || '0s';
}

export const WEBHOOK_EVENTS = ['alert.fired', 'alert.resolved', 'channel.health_changed', 'key.created', 'key.revoked', 'user.created', 'quota.exhausted', 'file.processed', 'file.failed', 'maintenance.changed', 'settings.changed'] as const;

/** The events list to send: "*" alone when every event is ticked or "*" is. */
export function eventsBody(selected: readonly string[]): string[] {
  if (selected.includes('*') || WEBHOOK_EVENTS.every((e) => selected.includes(e))) return ['*'];
  return WEBHOOK_EVENTS.filter((e) => selected.includes(e));
}

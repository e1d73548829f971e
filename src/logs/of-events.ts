/**
 * Log entries derived from domain events (the `logs` projection writes them; a rebuild writes the
 * same ones again). Pure and deterministic: the entry ids are `ev-<event id>` (a second entry of
 * one event gets a suffix), the timestamp is the event's, nothing reads a clock.
 *
 * What an entry may hold: ids, roles, counts, statuses, codes. Never a secret (hashes, sealed
 * values, keys) and never user content: names and titles of files, conversations, keys and presets
 * are the user's, so entries name things by id only. The event's stored data is read field by
 * field (only what is named here reaches an entry).
 */
import { ownValue } from '../own.js';
import type { StoredEvent } from '../ports/event-store.js';
import { usageEventOf } from '../projections/usage-events.js';
import type { LogCategory, LogEntry, LogLevel } from './entry.js';

export interface EntriesOfEventOptions {
  /** A relay request slower than this (ms) is a `performance` entry (SLOW_REQUEST_THRESHOLD). */
  slowRequestMs?: number;
}

const DEFAULT_SLOW_MS = 10_000;
const SYSTEM_TENANT = '_system';

/** Every event type that may produce entries (the projection's eventTypes). */
export const LOGGED_EVENT_TYPES = [
  'SessionStarted',
  'SessionRevoked',
  'ApiKeyCreated',
  'ApiKeyUpdated',
  'ApiKeyRevoked',
  'PresetCreated',
  'PresetUpdated',
  'PresetDeleted',
  'ConversationStarted',
  'ConversationRenamed',
  'ConversationDeleted',
  'FileUploaded',
  'FileProcessed',
  'FileProcessingFailed',
  'FileDeleted',
  'TenantSettingsChanged',
  'PreferencesChanged',
  'PasswordChanged',
  'UserCreated',
  'UserDisabled',
  'UserEnabled',
  'UserDeleted',
  'UserRoleChanged',
  'MfaEnabled',
  'MfaDisabled',
  'MfaRecoveryCodeUsed',
  'MfaSecretResealed',
  'TenantDisabled',
  'TenantEnabled',
  'ChannelHealthChanged',
  'UsageRecorded',
  'AlertFired',
  'AlertResolved',
] as const;

type Data = Record<string, unknown>;
const str = (d: Data, key: string): string | undefined => {
  const value = ownValue(d, key);
  return typeof value === 'string' ? value : undefined;
};
const num = (d: Data, key: string): number | undefined => {
  const value = ownValue(d, key);
  return typeof value === 'number' ? value : undefined;
};
/** The id part of a stream name (`user-usr_1` -> `usr_1`). */
const streamId = (stored: StoredEvent): string => stored.stream.slice(stored.stream.indexOf('-') + 1);
/** Field names only (what changed, never the values). */
const fieldsOf = (d: Data, without: readonly string[] = ['by']): string[] => Object.keys(d).filter((k) => !without.includes(k)).sort();

/** What varies between entries; the rest comes from the event. */
interface Shape {
  category: LogCategory;
  level: LogLevel;
  component: string;
  event: string;
  message: string;
  details: Data;
  user_id?: string | undefined;
  session_id?: string | undefined;
  request_id?: string | undefined;
  ip_address?: string | undefined;
  /** Overrides the event's tenant (usage events carry the request's). */
  tenant_id?: string | undefined;
  /** Suffix of the id for an event's second entry. */
  suffix?: string;
}

function timestampOf(occurredAt: string): string {
  const time = new Date(occurredAt);
  return Number.isNaN(time.getTime()) ? occurredAt : time.toISOString();
}

function entryOf(stored: StoredEvent, shape: Shape): LogEntry {
  const tenant = shape.tenant_id ?? stored.tenant_id;
  const entry: LogEntry = {
    id: `ev-${stored.id}${shape.suffix ? `-${shape.suffix}` : ''}`,
    timestamp: timestampOf(stored.occurred_at),
    level: shape.level,
    category: shape.category,
    component: shape.component,
    event: shape.event,
    message: shape.message,
    details: shape.details,
    instance: 'projection',
  };
  if (tenant && tenant !== SYSTEM_TENANT) entry.tenant_id = tenant;
  if (shape.user_id) entry.user_id = shape.user_id;
  if (shape.session_id) entry.session_id = shape.session_id;
  if (shape.request_id) entry.request_id = shape.request_id;
  if (shape.ip_address) entry.ip_address = shape.ip_address;
  return entry;
}

const activity = (component: string, event: string, message: string, details: Data, user?: string, level: LogLevel = 'INFO'): Shape => ({
  category: 'user_activity',
  level,
  component,
  event,
  message,
  details,
  user_id: user,
});

const security = (event: string, level: LogLevel, message: string, details: Data, user?: string): Shape => ({ category: 'security', level, component: 'auth', event, message, details, user_id: user });

/** Upstream failures the client saw (the relay's codes for them). */
const isUpstreamError = (code: string | null): boolean => code !== null && (code.startsWith('upstream_') || code === 'bad_upstream_response');

function usageShapes(stored: StoredEvent, slowMs: number): Shape[] {
  const parsed = usageEventOf(stored);
  if (!parsed) return [];
  const u = parsed.usage;
  const failed = u.status >= 500 || isUpstreamError(u.error_code);
  const slow = u.latency_ms > slowMs;
  if (!failed && !slow) return [];
  const component = u.provider ? `provider:${u.provider}` : 'relay';
  const details: Data = {
    model: u.model_requested,
    model_served: u.model_served,
    status: u.status,
    error_code: u.error_code,
    latency_ms: u.latency_ms,
    channel_id: u.channel_id,
    key_id: u.key_id,
    attempts: u.attempts,
    stream: u.stream,
  };
  const common = { component, details, user_id: u.user_id ?? undefined, request_id: u.request_id, tenant_id: u.tenant_id };
  const shapes: Shape[] = [];
  if (failed) {
    shapes.push({
      ...common,
      category: 'application',
      level: u.status >= 500 ? 'ERROR' : 'WARNING',
      event: 'relay_error',
      message: `relay request for ${u.model_requested} failed: ${u.status}${u.error_code ? ` ${u.error_code}` : ''}`,
    });
  }
  if (slow) {
    shapes.push({
      ...common,
      category: 'performance',
      level: 'WARNING',
      event: 'slow_request',
      message: `relay request for ${u.model_requested} took ${Math.round(u.latency_ms)} ms`,
      ...(failed && { suffix: 'slow' }),
    });
  }
  return shapes;
}

function shapesOf(stored: StoredEvent, options: EntriesOfEventOptions): Shape[] {
  const d = stored.data;
  const id = streamId(stored);
  const by = str(d, 'by');
  const withBy = (details: Data): Data => (by ? { ...details, by } : details);
  switch (stored.type) {
    case 'SessionStarted': {
      const user = str(d, 'user_id');
      return [{ ...activity('auth', 'login', `user ${user ?? '?'} logged in`, { user_agent: str(d, 'user_agent') ?? null }, user), session_id: id, ip_address: str(d, 'ip') }];
    }
    case 'SessionRevoked': {
      const reason = str(d, 'reason') ?? 'unknown';
      if (reason === 'refresh_token_reused') return [{ ...security('refresh_token_reused', 'WARNING', `session ${id} revoked: a retired refresh token was presented again`, { reason }, by), session_id: id }];
      const event = reason === 'logout' ? 'logout' : 'session_revoked';
      return [{ ...activity('auth', event, reason === 'logout' ? `user ${by ?? '?'} logged out` : `session ${id} revoked (${reason})`, withBy({ reason }), by), session_id: id }];
    }
    case 'ApiKeyCreated':
      return [activity('keys', 'key_created', `API key ${id} created`, withBy({ key_id: id }), str(d, 'user_id'))];
    case 'ApiKeyUpdated':
      return [activity('keys', 'key_updated', `API key ${id} updated`, { key_id: id, fields: fieldsOf(d) }, by)];
    case 'ApiKeyRevoked':
      return [activity('keys', 'key_revoked', `API key ${id} revoked`, withBy({ key_id: id }), by)];
    case 'PresetCreated':
      return [activity('presets', 'preset_created', `preset ${id} created`, { preset_id: id, visibility: str(d, 'visibility') ?? null }, str(d, 'owner_id'))];
    case 'PresetUpdated':
      return [activity('presets', 'preset_updated', `preset ${id} updated`, { preset_id: id, fields: fieldsOf(d) })];
    case 'PresetDeleted':
      return [activity('presets', 'preset_deleted', `preset ${id} deleted`, withBy({ preset_id: id }), by)];
    case 'ConversationStarted':
      return [activity('conversations', 'conversation_started', `conversation ${id} started`, { conversation_id: id }, str(d, 'user_id'))];
    case 'ConversationRenamed':
      return [activity('conversations', 'conversation_renamed', `conversation ${id} renamed`, { conversation_id: id, generated: d.generated === true })];
    case 'ConversationDeleted':
      return [activity('conversations', 'conversation_deleted', `conversation ${id} deleted`, withBy({ conversation_id: id }), by)];
    case 'FileUploaded':
      return [activity('files', 'file_uploaded', `file ${id} uploaded (${num(d, 'bytes') ?? 0} bytes)`, { file_id: id, bytes: num(d, 'bytes') ?? null, mime_type: str(d, 'mime_type') ?? null, purpose: str(d, 'purpose') ?? null }, str(d, 'user_id'))];
    case 'FileProcessed':
      return [activity('files', 'file_processed', `file ${id} processed`, { file_id: id, text_chars: num(d, 'text_chars') ?? null, pages: num(d, 'pages') ?? null, ocr_pages: num(d, 'ocr_pages') ?? null, truncated: d.truncated === true })];
    case 'FileProcessingFailed':
      // The reason may quote the file's content: the code only.
      return [activity('files', 'file_failed', `file ${id} could not be processed: ${str(d, 'code') ?? 'error'}`, { file_id: id, code: str(d, 'code') ?? null }, undefined, 'WARNING')];
    case 'FileDeleted':
      return [activity('files', 'file_deleted', `file ${id} deleted`, withBy({ file_id: id }), by)];
    case 'TenantSettingsChanged':
      return [activity('settings', 'settings_changed', `settings of tenant ${stored.tenant_id} changed`, withBy({ fields: fieldsOf(d) }), by)];
    case 'PreferencesChanged': {
      const prefs = d.preferences && typeof d.preferences === 'object' ? (d.preferences as Data) : {};
      return [activity('users', 'preferences_changed', `user ${id} changed preferences`, { fields: fieldsOf(prefs, []) }, id)];
    }
    case 'PasswordChanged':
      return [activity('users', 'password_changed', `user ${id} changed password`, {}, id)];
    case 'UserCreated':
      return [activity('users', 'user_created', `user ${id} created with role ${str(d, 'role') ?? '?'}`, { role: str(d, 'role') ?? null }, id)];
    case 'UserDisabled':
      return [activity('users', 'user_disabled', `user ${id} disabled`, withBy({}), id, 'WARNING')];
    case 'UserEnabled':
      return [activity('users', 'user_enabled', `user ${id} enabled`, withBy({}), id)];
    case 'UserDeleted':
      return [activity('users', 'user_deleted', `user ${id} deleted`, withBy({}), id, 'WARNING')];
    case 'UserRoleChanged':
      return [security('role_changed', 'WARNING', `user ${id} now has role ${str(d, 'role') ?? '?'}`, withBy({ role: str(d, 'role') ?? null }), id)];
    case 'MfaEnabled':
      return [security('mfa_enabled', 'INFO', `user ${id} turned on two-factor authentication`, {}, id)];
    case 'MfaDisabled':
      return [security('mfa_disabled', 'WARNING', by ? `two-factor authentication of user ${id} reset by ${by}` : `user ${id} turned off two-factor authentication`, withBy({}), id)];
    case 'MfaRecoveryCodeUsed':
      return [security('mfa_recovery_code_used', 'WARNING', `user ${id} logged in with a recovery code`, {}, id)];
    case 'MfaSecretResealed':
      // The sealed values stay out: which of them were re-sealed is all an auditor needs.
      return [security('mfa_secret_resealed', 'INFO', `two-factor secret of user ${id} re-sealed under a new SECRET`, { fields: fieldsOf(d) }, id)];
    case 'TenantDisabled':
      return [{ ...security('tenant_disabled', 'WARNING', `tenant ${id} disabled`, withBy({ tenant_id: id }), by), component: 'tenants' }];
    case 'TenantEnabled':
      return [{ ...security('tenant_enabled', 'INFO', `tenant ${id} enabled`, withBy({ tenant_id: id }), by), component: 'tenants' }];
    case 'ChannelHealthChanged': {
      const healthy = d.healthy === true;
      return [
        {
          category: 'application',
          level: healthy ? 'INFO' : 'WARNING',
          component: 'channels',
          event: healthy ? 'channel_healthy' : 'channel_unhealthy',
          message: `channel ${id} ${healthy ? 'is healthy again' : `is unhealthy: ${str(d, 'reason') ?? 'unknown'}`}`,
          details: { channel_id: id, healthy, reason: str(d, 'reason') ?? null, cooldown_until: str(d, 'cooldown_until') ?? null },
        },
      ];
    }
    case 'UsageRecorded':
      return usageShapes(stored, options.slowRequestMs ?? DEFAULT_SLOW_MS);
    case 'AlertFired':
    case 'AlertResolved': {
      const fired = stored.type === 'AlertFired';
      const severity = str(d, 'severity') ?? 'warning';
      return [
        {
          category: 'application',
          level: fired ? (severity === 'critical' ? 'ERROR' : 'WARNING') : 'INFO',
          component: 'alerts',
          event: fired ? 'alert_fired' : 'alert_resolved',
          message: str(d, 'message') ?? `alert ${str(d, 'rule_id') ?? id} ${fired ? 'fired' : 'resolved'}`,
          details: {
            alert_id: str(d, 'alert_id') ?? null,
            rule_id: str(d, 'rule_id') ?? null,
            kind: str(d, 'kind') ?? null,
            severity,
            value: num(d, 'value') ?? null,
            threshold: num(d, 'threshold') ?? null,
            ...(fired ? {} : { reason: str(d, 'reason') ?? null }),
          },
        },
      ];
    }
    default:
      return [];
  }
}

/** The log entries of one stored event (none for most: only the types in LOGGED_EVENT_TYPES). */
export function entriesOfEvent(stored: StoredEvent, options: EntriesOfEventOptions = {}): LogEntry[] {
  return shapesOf(stored, options).map((shape) => entryOf(stored, shape));
}

/**
 * The webhook payloads, and which events of the log become one (pure: no I/O). A webhook gets the
 * format of its `api_version` (docs/api-versions.md):
 *
 *   v2 (current): {id, type, api_version: "v2", created_at, tenant_id, data}
 *   v1 (legacy, the 1.x format): {id, event, api_version: "v1", timestamp, tenant, data}
 *       (`event`: the type; `timestamp`: Unix seconds; `tenant`: the tenant id)
 *
 * `id` is derived from the event's id (a quota notice: from what it de-duplicates on), so every
 * attempt and redelivery of a notice carries the same id: receivers use it as the idempotency key
 * (also sent as `X-Switchyard-Event-Id` and `Idempotency-Key`). `data` never carries a secret, a
 * key or its hash, a password hash, or user content (file names, texts).
 */
import { createHash } from 'node:crypto';
import { WEBHOOK_TEST_TYPE, type WEBHOOK_PAYLOAD_VERSIONS, type WebhookEventType } from '../commands/webhooks/events.js';
import type { StoredEvent } from '../ports/event-store.js';

export const WEBHOOK_API_VERSION = 'v2';
/** The payload formats a webhook can be given (a webhook made before 2.0 has v2). */
export type WebhookPayloadVersion = (typeof WEBHOOK_PAYLOAD_VERSIONS)[number];

/** The relay's refusal of a request for an exhausted key quota or user balance (src/relay/access). */
export const QUOTA_REFUSAL_CODE = 'insufficient_quota';

/** What a payload's `type` can be: a subscribable type, or the test an admin asked for. */
export type WebhookPayloadType = WebhookEventType | typeof WEBHOOK_TEST_TYPE;

export interface WebhookPayload {
  id: string;
  type: WebhookPayloadType;
  api_version: typeof WEBHOOK_API_VERSION;
  created_at: string;
  tenant_id: string;
  data: Record<string, unknown>;
}

/** The legacy (API v1) payload: the names 1.x receivers read. */
export interface LegacyWebhookPayload {
  id: string;
  event: WebhookPayloadType;
  api_version: 'v1';
  timestamp: number;
  tenant: string;
  data: Record<string, unknown>;
}

/** What an event tells webhooks, before it is addressed to one. */
export interface WebhookNotice {
  type: WebhookPayloadType;
  /** Unique per notice: the stored event's id, or a quota notice's de-duplication key. */
  key: string;
  /** Whose webhooks hear it; null: every tenant's (installation-wide: maintenance). */
  tenantId: string | null;
  /** Webhook ids the event names itself (an alert rule's `notify`), told whatever they subscribe to. */
  notify: readonly string[];
  createdAt: string;
  data: Record<string, unknown>;
}

/** What the files read model knows of a file (its FileProcessed event does not carry it). */
export interface FileFacts {
  user_id: string;
  mime_type: string;
  bytes: number;
  purpose: string;
}

/** Event types of the log that may become notices (UsageRecorded: only quota refusals). */
export const NOTICE_SOURCE_TYPES = [
  'AlertFired',
  'AlertResolved',
  'ChannelHealthChanged',
  'ApiKeyCreated',
  'ApiKeyRevoked',
  'UserCreated',
  'UsageRecorded',
  'FileProcessed',
  'FileProcessingFailed',
  'MaintenanceEnabled',
  'MaintenanceDisabled',
  'TenantSettingsChanged',
] as const;

const idAfterDash = (stream: string) => stream.slice(stream.indexOf('-') + 1);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** True for the usage events that can become a quota.exhausted notice: read without parsing the rest. */
export function isQuotaRefusal(event: StoredEvent): boolean {
  return event.type === 'UsageRecorded' && event.data.error_code === QUOTA_REFUSAL_CODE;
}

/**
 * The notice an event gives, or null. Quota refusals are de-duplicated per key (or user, for a
 * session caller) and hour: the key names the hour, so the hour's later refusals give the same
 * notice, stored once per webhook.
 */
export function noticeOf(event: StoredEvent, file?: FileFacts | null): WebhookNotice | null {
  const d = event.data;
  const base = { key: event.id, tenantId: event.tenant_id as string | null, notify: [] as string[], createdAt: event.occurred_at };
  switch (event.type) {
    case 'AlertFired':
    case 'AlertResolved': {
      const fired = event.type === 'AlertFired';
      const notify = Array.isArray(d.notify) ? d.notify.filter((id): id is string => typeof id === 'string') : [];
      const { notify: _notify, ...data } = d;
      return { ...base, type: fired ? 'alert.fired' : 'alert.resolved', notify, data };
    }
    case 'ChannelHealthChanged':
      return { ...base, type: 'channel.health_changed', data: { channel_id: idAfterDash(event.stream), healthy: d.healthy, cooldown_until: d.cooldown_until ?? null, reason: d.reason ?? null } };
    case 'ApiKeyCreated': {
      const policy = (d.policy ?? {}) as { expires_at?: unknown };
      return { ...base, type: 'key.created', data: { key_id: d.key_id, name: d.name, user_id: d.user_id, expires_at: policy.expires_at ?? null } };
    }
    case 'ApiKeyRevoked':
      return { ...base, type: 'key.revoked', data: { key_id: idAfterDash(event.stream), by: d.by ?? null } };
    case 'UserCreated':
      return { ...base, type: 'user.created', data: { user_id: d.user_id, email: d.email, role: d.role } };
    case 'UsageRecorded': {
      if (!isQuotaRefusal(event)) return null;
      const keyId = str(d.key_id);
      const userId = str(d.user_id);
      const hour = event.occurred_at.slice(0, 13); // YYYY-MM-DDTHH
      const subject = keyId !== null ? `key:${keyId}` : `user:${userId ?? ''}`;
      return {
        ...base,
        key: `quota.exhausted:${event.tenant_id}:${subject}:${hour}`,
        type: 'quota.exhausted',
        data: { scope: keyId !== null ? 'key' : 'user', key_id: keyId, user_id: userId, model: d.model_requested ?? null, request_id: d.request_id ?? null, error_code: QUOTA_REFUSAL_CODE, hour: `${hour}:00:00Z` },
      };
    }
    case 'FileProcessed':
    case 'FileProcessingFailed': {
      // Ids, type and sizes only: never the file's name or its text (user content).
      const facts = { file_id: idAfterDash(event.stream), user_id: file?.user_id ?? null, mime_type: file?.mime_type ?? null, bytes: file?.bytes ?? null, purpose: file?.purpose ?? null };
      if (event.type === 'FileProcessed') return { ...base, type: 'file.processed', data: { ...facts, text_chars: d.text_chars, truncated: d.truncated, pages: d.pages ?? null, ocr_pages: d.ocr_pages ?? 0 } };
      return { ...base, type: 'file.failed', data: { ...facts, code: d.code } };
    }
    case 'MaintenanceEnabled':
      return { ...base, tenantId: null, type: 'maintenance.changed', data: { enabled: true, message: d.message, by: d.by ?? null } };
    case 'MaintenanceDisabled':
      return { ...base, tenantId: null, type: 'maintenance.changed', data: { enabled: false, message: null, by: d.by ?? null } };
    case 'TenantSettingsChanged': {
      const { by, ...changes } = d;
      return { ...base, type: 'settings.changed', data: { changes, by: by ?? null } };
    }
    default:
      return null;
  }
}

/** The notice of a test an admin asked for (WebhookTestRequested): to that webhook only. */
export function testNoticeOf(event: StoredEvent, webhookId: string, testId: string, by: string | null): WebhookNotice {
  return { type: WEBHOOK_TEST_TYPE, key: testNoticeKey(testId), tenantId: event.tenant_id, notify: [webhookId], createdAt: event.occurred_at, data: { webhook_id: webhookId, requested_by: by } };
}

export const testNoticeKey = (testId: string) => `${WEBHOOK_TEST_TYPE}:${testId}`;

/** The payload id of a notice: the same for every webhook and attempt. */
export function payloadIdOf(noticeKey: string): string {
  return `evt_${createHash('sha256').update(noticeKey).digest('hex').slice(0, 32)}`;
}

/** A delivery's id: one per (webhook, notice), so a replayed notice finds its row. */
export function deliveryIdOf(webhookId: string, noticeKey: string): string {
  return `whd_${createHash('sha256').update(`${webhookId}\n${noticeKey}`).digest('hex').slice(0, 32)}`;
}

/**
 * The payload for one webhook, in its format: installation-wide notices carry the webhook's
 * tenant. Both formats carry the same id and data.
 */
export function payloadOf(notice: WebhookNotice, tenantId: string, version: WebhookPayloadVersion = WEBHOOK_API_VERSION): WebhookPayload | LegacyWebhookPayload {
  const id = payloadIdOf(notice.key);
  if (version === 'v1') return { id, event: notice.type, api_version: 'v1', timestamp: Math.floor(Date.parse(notice.createdAt) / 1000), tenant: tenantId, data: notice.data };
  return { id, type: notice.type, api_version: WEBHOOK_API_VERSION, created_at: notice.createdAt, tenant_id: tenantId, data: notice.data };
}

/** A stored webhook row's format (a column other than v1 reads as the current one). */
export const payloadVersionOf = (column: string | null | undefined): WebhookPayloadVersion => (column === 'v1' ? 'v1' : 'v2');

/** Whether a webhook subscribed to `events` hears a notice of `type`. */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}

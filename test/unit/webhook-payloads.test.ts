/** Which events become webhook notices, and what their v2 payloads carry (src/webhooks/payloads.ts). */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/ports/event-store.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/commands/webhooks/events.js';
import { webhookEventMatters } from '../../src/projections/webhooks.js';
import { deliveryIdOf, NOTICE_SOURCE_TYPES, noticeOf, payloadIdOf, payloadOf, subscribes } from '../../src/webhooks/payloads.js';

let seq = 0;
function stored(type: string, stream: string, data: Record<string, unknown>, occurredAt = '2026-11-28T10:15:00.000Z', tenant = 't1'): StoredEvent {
  seq++;
  return { id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`, type, stream, version: 1, position: seq, tenant_id: tenant, occurred_at: occurredAt, schema_version: 1, causation_id: null, correlation_id: null, data };
}

const usage = (errorCode: string | null, keyId: string | null, at?: string) =>
  stored('UsageRecorded', 'usage-a', { request_id: `r${seq}`, tenant_id: 't1', user_id: 'u1', key_id: keyId, model_requested: 'gpt-x', status: errorCode ? 429 : 200, error_code: errorCode }, at);

describe('webhook notices', () => {
  it('key.created never carries the key, its hash or its prefix', () => {
    const notice = noticeOf(stored('ApiKeyCreated', 'apikey-k1', { key_id: 'k1', name: 'ci', user_id: 'u1', key_hash: 'HASH', key_prefix: 'sk-abcde', policy: { expires_at: null } }))!;
    expect(notice).toMatchObject({ type: 'key.created', tenantId: 't1', data: { key_id: 'k1', name: 'ci', user_id: 'u1', expires_at: null } });
    expect(JSON.stringify(notice)).not.toMatch(/HASH|sk-abcde/);
  });

  it('user.created carries no password hash', () => {
    const notice = noticeOf(stored('UserCreated', 'user-u1', { user_id: 'u1', email: 'a@b.c', password_hash: 'scrypt$SECRET', role: 'user' }))!;
    expect(notice.data).toEqual({ user_id: 'u1', email: 'a@b.c', role: 'user' });
  });

  it('file notices carry ids, type and sizes, never the name or the text', () => {
    const facts = { user_id: 'u1', mime_type: 'application/pdf', bytes: 1234, purpose: 'chat' };
    const processed = noticeOf(stored('FileProcessed', 'file-f1', { text_key: 'texts/f1', text_chars: 99, truncated: false, pages: 2, ocr_pages: 0 }), facts)!;
    expect(processed).toMatchObject({ type: 'file.processed', data: { file_id: 'f1', ...facts, text_chars: 99, pages: 2 } });
    expect(JSON.stringify(processed)).not.toContain('texts/f1');
    const failed = noticeOf(stored('FileProcessingFailed', 'file-f2', { code: 'file_processing_error', reason: 'cannot read report-2026.pdf' }), null)!;
    expect(failed.data).toEqual({ file_id: 'f2', user_id: null, mime_type: null, bytes: null, purpose: null, code: 'file_processing_error' });
  });

  it('alerts name their webhooks (notify) and keep the rest of the event', () => {
    const notice = noticeOf(stored('AlertFired', 'alertrule-r1', { alert_id: 'a1', rule_id: 'r1', notify: ['wh_1', 7], severity: 'critical', value: 3 }))!;
    expect(notice).toMatchObject({ type: 'alert.fired', notify: ['wh_1'], data: { alert_id: 'a1', rule_id: 'r1', severity: 'critical', value: 3 } });
    expect(notice.data).not.toHaveProperty('notify');
    expect(noticeOf(stored('AlertResolved', 'alertrule-r1', { alert_id: 'a1', notify: [] }))!.type).toBe('alert.resolved');
  });

  it('maintenance is installation-wide; the payload takes the webhook\'s tenant', () => {
    const notice = noticeOf(stored('MaintenanceEnabled', 'maintenance-global', { message: 'm', by: 'op' }, undefined, '_system'))!;
    expect(notice).toMatchObject({ type: 'maintenance.changed', tenantId: null, data: { enabled: true, message: 'm', by: 'op' } });
    expect(payloadOf(notice, 'tenant-b')).toMatchObject({ tenant_id: 'tenant-b', api_version: 'v2', type: 'maintenance.changed', created_at: '2026-11-28T10:15:00.000Z' });
  });

  it('renders the legacy v1 format for a v1 webhook: the same id and data, the 1.x names', () => {
    const notice = noticeOf(stored('MaintenanceEnabled', 'maintenance-global', { message: 'm', by: 'op' }, undefined, '_system'))!;
    const current = payloadOf(notice, 'tenant-b', 'v2');
    expect(payloadOf(notice, 'tenant-b', 'v1')).toEqual({ id: current.id, event: 'maintenance.changed', api_version: 'v1', timestamp: Date.parse('2026-11-28T10:15:00.000Z') / 1000, tenant: 'tenant-b', data: current.data });
  });

  it('channel health and settings changes', () => {
    expect(noticeOf(stored('ChannelHealthChanged', 'channel-c1', { healthy: false, cooldown_until: null, reason: 'upstream 500' }))).toMatchObject({ type: 'channel.health_changed', data: { channel_id: 'c1', healthy: false, reason: 'upstream 500' } });
    expect(noticeOf(stored('TenantSettingsChanged', 'settings-t1', { relay_api_enabled: false, by: 'a' }))).toMatchObject({ type: 'settings.changed', data: { changes: { relay_api_enabled: false }, by: 'a' } });
    expect(noticeOf(stored('ApiKeyRevoked', 'apikey-k9', { by: 'a' }))).toMatchObject({ type: 'key.revoked', data: { key_id: 'k9', by: 'a' } });
  });

  it('quota refusals give one notice key per key (or user) and hour; other usage events none', () => {
    const a = noticeOf(usage('insufficient_quota', 'k1', '2026-11-28T10:01:00.000Z'))!;
    const b = noticeOf(usage('insufficient_quota', 'k1', '2026-11-28T10:59:59.000Z'))!;
    const nextHour = noticeOf(usage('insufficient_quota', 'k1', '2026-11-28T11:00:00.000Z'))!;
    const otherKey = noticeOf(usage('insufficient_quota', 'k2', '2026-11-28T10:01:00.000Z'))!;
    const session = noticeOf(usage('insufficient_quota', null, '2026-11-28T10:01:00.000Z'))!;
    expect(a.type).toBe('quota.exhausted');
    expect(b.key).toBe(a.key);
    expect(new Set([a.key, nextHour.key, otherKey.key, session.key]).size).toBe(4);
    expect(session.data).toMatchObject({ scope: 'user', user_id: 'u1', key_id: null });
    expect(a.data).toMatchObject({ scope: 'key', key_id: 'k1', hour: '2026-11-28T10:00:00Z' });
    expect(noticeOf(usage(null, 'k1'))).toBeNull();
    expect(noticeOf(usage('rate_limit_exceeded', 'k1'))).toBeNull();
  });

  it('only quota refusals among usage events reach the projection', () => {
    expect(webhookEventMatters(usage(null, 'k1'))).toBe(false);
    expect(webhookEventMatters(usage('upstream_error', 'k1'))).toBe(false);
    expect(webhookEventMatters(usage('insufficient_quota', 'k1'))).toBe(true);
    expect(webhookEventMatters(stored('UserCreated', 'user-u', {}))).toBe(true);
  });

  it('every payload type has a source event, and every source type is read', () => {
    const types = new Set<string>();
    const samples: Record<string, StoredEvent> = {
      AlertFired: stored('AlertFired', 'alertrule-r', {}),
      AlertResolved: stored('AlertResolved', 'alertrule-r', {}),
      ChannelHealthChanged: stored('ChannelHealthChanged', 'channel-c', {}),
      ApiKeyCreated: stored('ApiKeyCreated', 'apikey-k', {}),
      ApiKeyRevoked: stored('ApiKeyRevoked', 'apikey-k', {}),
      UserCreated: stored('UserCreated', 'user-u', {}),
      UsageRecorded: usage('insufficient_quota', 'k'),
      FileProcessed: stored('FileProcessed', 'file-f', {}),
      FileProcessingFailed: stored('FileProcessingFailed', 'file-f', {}),
      MaintenanceEnabled: stored('MaintenanceEnabled', 'maintenance-global', {}),
      MaintenanceDisabled: stored('MaintenanceDisabled', 'maintenance-global', {}),
      TenantSettingsChanged: stored('TenantSettingsChanged', 'settings-t', {}),
    };
    expect(Object.keys(samples).sort()).toEqual([...NOTICE_SOURCE_TYPES].sort());
    for (const event of Object.values(samples)) types.add(noticeOf(event)!.type);
    expect([...types].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it('ids: the payload id is the notice\'s (same for every webhook), the delivery id per webhook', () => {
    expect(payloadIdOf('k')).toBe(payloadIdOf('k'));
    expect(payloadIdOf('k')).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(payloadIdOf('k')).not.toBe(payloadIdOf('j'));
    expect(deliveryIdOf('wh_1', 'k')).toBe(deliveryIdOf('wh_1', 'k'));
    expect(deliveryIdOf('wh_1', 'k')).not.toBe(deliveryIdOf('wh_2', 'k'));
  });

  it('subscriptions: a type, or "*"', () => {
    expect(subscribes(['key.created'], 'key.created')).toBe(true);
    expect(subscribes(['key.created'], 'key.revoked')).toBe(false);
    expect(subscribes(['*'], 'alert.fired')).toBe(true);
  });
});

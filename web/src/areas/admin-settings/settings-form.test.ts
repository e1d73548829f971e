import { describe, expect, it } from 'vitest';
import { draftOf, patchOf, quotaBytes, quotaOf, type SettingsView } from './settings-form';

const saved: SettingsView = {
  tenant_id: 'default',
  relay_api_enabled: true,
  subscription_covers_relay: 'hybrid',
  relay_settings: {
    enabled: true,
    default_provider: null,
    fallback_providers: ['openai'],
    rate_limiting: true,
    usage_tracking: true,
    error_logging: true,
    conversation_title_model: null,
  },
  storage_quota_bytes: 5 * 1024 ** 3,
  updated_at: null,
  updated_by: null,
};

describe('operations settings form', () => {
  it('sends nothing when nothing changed', () => {
    expect(patchOf(saved, draftOf(saved))).toEqual({ ok: true, body: {} });
  });

  it('sends only the changed fields, relay settings nested', () => {
    const draft = { ...draftOf(saved), relayApiEnabled: false, coverage: 'included' as const, defaultProvider: ' azure ', fallbackProviders: 'openai, groq', errorLogging: false };
    expect(patchOf(saved, draft)).toEqual({
      ok: true,
      body: {
        relay_api_enabled: false,
        subscription_covers_relay: 'included',
        relay_settings: { default_provider: 'azure', fallback_providers: ['openai', 'groq'], error_logging: false },
      },
    });
  });

  it('clears optional fields with null', () => {
    const withValues: SettingsView = { ...saved, relay_settings: { ...saved.relay_settings, default_provider: 'x', conversation_title_model: 'gpt-4o-mini' } };
    const draft = { ...draftOf(withValues), defaultProvider: '', titleModel: '  ', storageQuota: '' };
    expect(patchOf(withValues, draft)).toEqual({ ok: true, body: { relay_settings: { default_provider: null, conversation_title_model: null }, storage_quota_bytes: null } });
  });

  it('shows storage quotas in a readable unit and reads them back in bytes', () => {
    expect(quotaOf(null)).toEqual({ value: '', unit: 'GB' });
    expect(quotaOf(5 * 1024 ** 3)).toEqual({ value: '5', unit: 'GB' });
    expect(quotaOf(512 * 1024 ** 2)).toEqual({ value: '512', unit: 'MB' });
    expect(quotaOf(2 * 1024 ** 4)).toEqual({ value: '2', unit: 'TB' });
    expect(quotaBytes('1.5', 'GB')).toBe(1.5 * 1024 ** 3);
    expect(quotaBytes('', 'GB')).toBeNull();
    expect(quotaBytes('-1', 'GB')).toBeNaN();
    expect(patchOf(saved, { ...draftOf(saved), storageQuota: 'lots' })).toEqual({ ok: false, field: 'storageQuota' });
    expect(patchOf(saved, { ...draftOf(saved), storageQuota: '6' })).toEqual({ ok: true, body: { storage_quota_bytes: 6 * 1024 ** 3 } });
  });
});

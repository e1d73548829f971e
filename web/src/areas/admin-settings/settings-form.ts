/** The Operations form: the tenant's settings as edited, and the PATCH body of what changed. */

export const COVERAGE_MODES = ['included', 'excluded', 'hybrid'] as const;
export type Coverage = (typeof COVERAGE_MODES)[number];

/** GET /v1/admin/settings (the parts this page edits). */
export interface SettingsView {
  tenant_id: string;
  relay_api_enabled: boolean;
  subscription_covers_relay: Coverage;
  relay_settings: {
    enabled: boolean;
    default_provider: string | null;
    fallback_providers: string[];
    rate_limiting: boolean;
    usage_tracking: boolean;
    error_logging: boolean;
    conversation_title_model: string | null;
  };
  storage_quota_bytes: number | null;
  updated_at: string | null;
  updated_by: string | null;
}

export const QUOTA_UNITS = ['MB', 'GB', 'TB'] as const;
export type QuotaUnit = (typeof QUOTA_UNITS)[number];
const UNIT_BYTES: Record<QuotaUnit, number> = { MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

export interface SettingsDraft {
  relayApiEnabled: boolean;
  coverage: Coverage;
  defaultProvider: string;
  /** Comma or line separated, in order. */
  fallbackProviders: string;
  rateLimiting: boolean;
  usageTracking: boolean;
  errorLogging: boolean;
  titleModel: string;
  /** Empty: unlimited. */
  storageQuota: string;
  storageUnit: QuotaUnit;
}

/** A byte count in the largest unit that shows it without a long fraction. */
export function quotaOf(bytes: number | null): { value: string; unit: QuotaUnit } {
  if (bytes === null) return { value: '', unit: 'GB' };
  for (const unit of [...QUOTA_UNITS].reverse()) {
    const n = bytes / UNIT_BYTES[unit];
    if (n >= 1 && Number.isInteger(Math.round(n * 1000) / 1000)) return { value: String(n), unit };
  }
  return { value: String(Math.round((bytes / UNIT_BYTES.MB) * 1000) / 1000), unit: 'MB' };
}

/** The draft's quota in bytes (null: unlimited); NaN when it is not a number ≥ 0. */
export function quotaBytes(value: string, unit: QuotaUnit): number | null {
  const v = value.trim();
  if (v === '') return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) return Number.NaN;
  return Math.round(n * UNIT_BYTES[unit]);
}

export function draftOf(settings: SettingsView): SettingsDraft {
  const r = settings.relay_settings;
  const quota = quotaOf(settings.storage_quota_bytes);
  return {
    relayApiEnabled: settings.relay_api_enabled,
    coverage: settings.subscription_covers_relay,
    defaultProvider: r.default_provider ?? '',
    fallbackProviders: r.fallback_providers.join(', '),
    rateLimiting: r.rate_limiting,
    usageTracking: r.usage_tracking,
    errorLogging: r.error_logging,
    titleModel: r.conversation_title_model ?? '',
    storageQuota: quota.value,
    storageUnit: quota.unit,
  };
}

const names = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export type PatchResult = { ok: true; body: Record<string, unknown> } | { ok: false; field: 'storageQuota' };

/**
 * The PATCH body: only what differs from the saved settings (an empty body: nothing to save), so
 * a change another admin made meanwhile to another field is kept.
 */
export function patchOf(saved: SettingsView, draft: SettingsDraft): PatchResult {
  const body: Record<string, unknown> = {};
  const relay: Record<string, unknown> = {};
  const r = saved.relay_settings;
  if (draft.relayApiEnabled !== saved.relay_api_enabled) body.relay_api_enabled = draft.relayApiEnabled;
  if (draft.coverage !== saved.subscription_covers_relay) body.subscription_covers_relay = draft.coverage;
  const provider = draft.defaultProvider.trim() || null;
  if (provider !== r.default_provider) relay.default_provider = provider;
  const fallback = names(draft.fallbackProviders);
  if (!same(fallback, r.fallback_providers)) relay.fallback_providers = fallback;
  if (draft.rateLimiting !== r.rate_limiting) relay.rate_limiting = draft.rateLimiting;
  if (draft.usageTracking !== r.usage_tracking) relay.usage_tracking = draft.usageTracking;
  if (draft.errorLogging !== r.error_logging) relay.error_logging = draft.errorLogging;
  const title = draft.titleModel.trim() || null;
  if (title !== r.conversation_title_model) relay.conversation_title_model = title;
  if (Object.keys(relay).length) body.relay_settings = relay;
  const quota = quotaBytes(draft.storageQuota, draft.storageUnit);
  if (Number.isNaN(quota)) return { ok: false, field: 'storageQuota' };
  if (quota !== saved.storage_quota_bytes) body.storage_quota_bytes = quota;
  return { ok: true, body };
}

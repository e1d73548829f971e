/** Operational settings of a tenant (`settings-<tenant_id>`): only the fields that changed. */
import { z } from 'zod';
import { COVERAGE_MODES } from '../../billing/rating.js';

export const CoverageMode = z.enum(COVERAGE_MODES);

/** A provider as the router names it: a channel type or a channel name. */
const ProviderName = z.string().min(1).max(100);

/** The relay settings that changed (`relay_settings.enabled` is `relay_api_enabled`). */
export const RelaySettingsChange = z.object({
  default_provider: ProviderName.nullable().optional(),
  fallback_providers: z.array(ProviderName).max(20).optional(),
  rate_limiting: z.boolean().optional(),
  usage_tracking: z.boolean().optional(),
  error_logging: z.boolean().optional(),
  conversation_title_model: z.string().min(1).max(256).nullable().optional(),
});
export type RelaySettingsChange = z.infer<typeof RelaySettingsChange>;

export const TenantSettingsChanged = z.object({
  type: z.literal('TenantSettingsChanged'),
  data: z.object({
    relay_api_enabled: z.boolean().optional(),
    subscription_covers_relay: CoverageMode.optional(),
    relay_settings: RelaySettingsChange.optional(),
    /** Files: bytes the tenant's live files may take (null: unlimited). */
    storage_quota_bytes: z.number().int().nonnegative().nullable().optional(),
    by: z.string().nullable(),
  }),
});

export const SettingsEvent = z.discriminatedUnion('type', [TenantSettingsChanged]);
export type SettingsEvent = z.infer<typeof SettingsEvent>;
export const SETTINGS_EVENT_TYPES = ['TenantSettingsChanged'] as const;

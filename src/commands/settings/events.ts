/** Operational settings of a tenant (`settings-<tenant_id>`): only the fields that changed. */
import { z } from 'zod';
import { COVERAGE_MODES } from '../../billing/rating.js';

export const CoverageMode = z.enum(COVERAGE_MODES);

export const TenantSettingsChanged = z.object({
  type: z.literal('TenantSettingsChanged'),
  data: z.object({
    relay_api_enabled: z.boolean().optional(),
    subscription_covers_relay: CoverageMode.optional(),
    by: z.string().nullable(),
  }),
});

export const SettingsEvent = z.discriminatedUnion('type', [TenantSettingsChanged]);
export type SettingsEvent = z.infer<typeof SettingsEvent>;
export const SETTINGS_EVENT_TYPES = ['TenantSettingsChanged'] as const;

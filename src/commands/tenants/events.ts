/** Events of the tenant aggregate: an organisation whose users, channels and keys belong to it. */
import { z } from 'zod';

export const TenantCreated = z.object({
  type: z.literal('TenantCreated'),
  data: z.object({ tenant_id: z.string(), name: z.string() }),
});

export const TenantDisabled = z.object({ type: z.literal('TenantDisabled'), data: z.object({ by: z.string().nullable() }) });
export const TenantEnabled = z.object({ type: z.literal('TenantEnabled'), data: z.object({ by: z.string().nullable() }) });

export const TenantEvent = z.discriminatedUnion('type', [TenantCreated, TenantDisabled, TenantEnabled]);
export type TenantEvent = z.infer<typeof TenantEvent>;
export const TENANT_EVENT_TYPES = ['TenantCreated', 'TenantDisabled', 'TenantEnabled'] as const;

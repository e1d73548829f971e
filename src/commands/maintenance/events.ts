/** Events of the maintenance aggregate (one instance: the whole installation). */
import { z } from 'zod';

export const MaintenanceEnabled = z.object({
  type: z.literal('MaintenanceEnabled'),
  data: z.object({ message: z.string(), by: z.string().nullable() }),
});

export const MaintenanceDisabled = z.object({
  type: z.literal('MaintenanceDisabled'),
  data: z.object({ by: z.string().nullable() }),
});

export const MaintenanceEvent = z.discriminatedUnion('type', [MaintenanceEnabled, MaintenanceDisabled]);
export type MaintenanceEvent = z.infer<typeof MaintenanceEvent>;

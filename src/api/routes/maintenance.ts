/** Admin API of the maintenance aggregate. Reads come from the projected view. */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { MAINTENANCE_ID, SYSTEM_TENANT, maintenance } from '../../commands/maintenance/decider.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';

export const SetMaintenanceRequest = z.object({
  enabled: z.boolean(),
  message: z.string().max(1000).optional(),
});

export const MaintenanceResponse = z.object({
  enabled: z.boolean(),
  message: z.string(),
  changed_by: z.string().nullable(),
  changed_at: z.string().nullable(),
}).meta({ id: 'Maintenance' });

export function maintenanceRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);

    app.post(
      '/v1/admin/maintenance',
      { preHandler: admin, schema: { tags: ['admin'], summary: 'Turn maintenance mode on or off', body: SetMaintenanceRequest, response: { 200: MaintenanceResponse } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const result = await ctx.commands.execute(
          maintenance,
          MAINTENANCE_ID,
          { type: 'SetMaintenance', enabled: request.body.enabled, message: request.body.message ?? null, by: principal.userId },
          { tenantId: SYSTEM_TENANT, causationId: request.id },
        );
        // Read-your-writes: answer once the read model and this instance's live view have it.
        if (result.position !== null) {
          await Promise.all([ctx.runner.waitFor(result.position, { projections: ['maintenance'] }), ctx.views.maintenance.waitFor(result.position)]);
        }
        return ctx.queries.maintenance();
      },
    );

    app.get('/v1/admin/maintenance', { preHandler: admin, schema: { tags: ['admin'], summary: 'Current maintenance mode', response: { 200: MaintenanceResponse } } }, async () =>
      ctx.queries.maintenance(),
    );
  };
}

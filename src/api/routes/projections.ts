/**
 * Projection quarantine for operators (admins of the operating tenant: the events are of every
 * tenant): `GET /v1/admin/projections/quarantine` lists the events projections set aside as
 * poison, `POST /v1/admin/projections/quarantine/replay` re-applies them after a fix. See
 * src/projections/runtime/quarantine.ts.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ForbiddenError, NotFoundError } from '../../errors.js';
import { projectionsOf } from '../../projections/index.js';
import { listQuarantine, replayQuarantine } from '../../projections/runtime/quarantine.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { isOperator } from './tenants.js';

const ProjectionName = z.string().min(1).max(100).describe('a projection name (see /health)');

export const QuarantinedEventView = z.object({
  projection: z.string(),
  event_position: z.number().int().describe("the event's commit position in the log"),
  event_version: z.number().int().describe('its version in its stream'),
  event_id: z.string(),
  stream: z.string(),
  event_type: z.string(),
  tenant_id: z.string(),
  occurred_at: z.string(),
  error: z.string().describe('what the projection threw (the latest attempt)'),
  quarantined_at: z.string(),
  replayed_at: z.string().nullable().describe('null while quarantined'),
});

export const QuarantineList = z.object({ data: z.array(QuarantinedEventView) });

export const QuarantineReplayRequest = z.object({ projection: ProjectionName.optional().describe('default: every projection') });
export const QuarantineReplayResponse = z.object({
  data: z.array(
    z.object({
      projection: z.string(),
      event_position: z.number().int(),
      event_version: z.number().int(),
      event_id: z.string(),
      result: z.enum(['applied', 'failed', 'missing']).describe('applied: marked replayed; failed: still quarantined, with the new error'),
      error: z.string().optional(),
    }),
  ),
  applied: z.number().int(),
  still_quarantined: z.number().int(),
});

export function projectionRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const operator = async (request: Parameters<typeof requirePrincipal>[0]) => {
      if (!isOperator(await requirePrincipal(request, ctx.tokens))) throw new ForbiddenError('the projection quarantine is for operators (admins of the default tenant)', 'forbidden');
    };
    const known = (name: string | undefined) => {
      if (name !== undefined && !projectionsOf(ctx.config).some((p) => p.name === name)) throw new NotFoundError(`no projection named ${name}`, 'projection_not_found');
      return name === undefined ? undefined : [name];
    };
    const tags = ['admin'];

    app.get(
      '/v1/admin/projections/quarantine',
      {
        preHandler: [admin, operator],
        schema: {
          tags,
          summary: 'Events projections could not apply and set aside (in log order)',
          querystring: z.object({ projection: ProjectionName.optional(), include_replayed: z.enum(['true', 'false']).optional().describe('also events replayed since (default false)') }),
          response: { 200: QuarantineList },
        },
      },
      async (request) => ({ data: await listQuarantine(ctx.sql.db, { projections: known(request.query.projection), includeReplayed: request.query.include_replayed === 'true', limit: 1000 }) }),
    );

    app.post(
      '/v1/admin/projections/quarantine/replay',
      {
        preHandler: [admin, operator],
        schema: {
          tags,
          summary: 'Re-apply quarantined events in log order (after a fix); those that still fail stay quarantined',
          body: QuarantineReplayRequest.optional(),
          response: { 200: QuarantineReplayResponse },
        },
      },
      async (request) => {
        const outcomes = await replayQuarantine(ctx.sql.db, ctx.store, projectionsOf(ctx.config), known(request.body?.projection));
        const applied = outcomes.filter((o) => o.result === 'applied').length;
        return { data: outcomes, applied, still_quarantined: outcomes.length - applied };
      },
    );
  };
}

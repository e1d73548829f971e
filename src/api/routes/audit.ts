/**
 * Auditing (admins; their own tenant, operators any): `POST /v1/admin/audit/replay` rebuilds the
 * audited read models (usage, billing) from the event log into a scratch database and compares
 * them with the live ones for a tenant and period; `GET /v1/admin/audit/history` lists, from the
 * log, every event that changed a user's or a key's usage or balance. See src/audit/.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Principal } from '../../auth/tokens.js';
import { openSqlDatabase } from '../../adapters/sql/database.js';
import { auditHistory, auditReplay, type AuditDeps } from '../../audit/replay.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { projectionsOf } from '../../projections/index.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { EntityId, isOperator } from './tenants.js';
import { Instant } from './usage.js';

/** The audit's dependencies in this application: embedded SQLite gets a connection of the audit's own (its long read must not hold the app's). */
function auditDeps(ctx: AppContext): AuditDeps {
  const readModels = ctx.config.readModels;
  return {
    store: ctx.store,
    live: ctx.sql.db,
    liveDialect: ctx.sql.dialect,
    openLiveReader: readModels.kind === 'sqlite' ? () => openSqlDatabase(readModels) : undefined,
    logger: ctx.logger,
    projections: projectionsOf(ctx.config),
    settings: { ...ctx.config.audit, secret: ctx.config.secret },
  };
}

export const AuditReplayRequest = z.object({
  tenant_id: EntityId.optional().describe("default: the caller's tenant (operators may name any)"),
  from: Instant.describe('inclusive'),
  to: Instant.describe('exclusive'),
});

const Cells = z.record(z.string(), z.string().nullable()).describe('column -> value (as text)');
export const TableReportView = z.object({
  table: z.string(),
  live_rows: z.number().int(),
  replayed_rows: z.number().int(),
  missing: z.array(z.object({ key: Cells, replayed: Cells })).describe('rows the log produces that the live table lacks (first 100)'),
  extra: z.array(z.object({ key: Cells, live: Cells })).describe('live rows the log does not produce (first 100)'),
  different: z.array(z.object({ key: Cells, columns: z.record(z.string(), z.object({ live: z.string().nullable(), replayed: z.string().nullable() })) })).describe('first 100'),
  differences: z.number().int(),
});
export const AuditReportView = z.object({
  tenant_id: z.string(),
  from: z.string(),
  to: z.string(),
  projections: z.array(z.object({ name: z.string(), position: z.number().int().describe('log position compared at (the live checkpoint)') })),
  tables: z.array(TableReportView),
  quarantined: z
    .array(
      z.object({
        projection: z.string(),
        event_position: z.number().int(),
        event_version: z.number().int(),
        event_id: z.string(),
        event_type: z.string(),
        occurred_at: z.string(),
        error: z.string(),
        found_in: z.enum(['live', 'replay', 'both']),
      }),
    )
    .describe("events of the tenant (up to `to`) an audited projection could not apply and quarantined: each counts as a difference"),
  differences: z.number().int().describe('0: the live read models agree with the log'),
  replay: z
    .object({
      from_snapshot: z.object({ id: z.string(), positions: z.record(z.string(), z.number().int()) }).nullable().describe('the audit snapshot the replay continued from (null: the log from its beginning)'),
      rejected_snapshots: z.array(z.string()).describe('snapshots whose seal did not match their contents: not used'),
      events_replayed: z.number().int(),
      saved_snapshot: z.string().nullable().describe('the snapshot this audit saved, if any'),
    })
    .describe('how the replay was made'),
});

export const AuditHistoryQuery = z.object({
  user_id: z.string().min(1).max(191).optional(),
  key_id: z.string().min(1).max(64).optional(),
  tenant_id: EntityId.optional().describe('operators only: another tenant'),
  after: z.coerce.number().int().min(0).default(0).describe('log position to continue after (`next_after`)'),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});
export const HistoryEntryView = z.object({
  position: z.number().int(),
  event_id: z.string(),
  type: z.string(),
  stream: z.string(),
  version: z.number().int(),
  occurred_at: z.string(),
  tenant_id: z.string(),
  causation_id: z.string().nullable(),
  correlation_id: z.string().nullable(),
  request_id: z.string().nullable().describe('the request the event is about'),
  data: z.record(z.string(), z.unknown()),
});
export const AuditHistoryView = z.object({
  object: z.literal('list'),
  subject: z.object({ kind: z.enum(['user', 'key']), id: z.string() }),
  data: z.array(HistoryEntryView),
  next_after: z.number().int().nullable().describe('null: the end of the log'),
});

export function auditRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const tags = ['audit'];

    const scopeOf = async (principal: Principal, named: string | undefined): Promise<string> => {
      if (named === undefined || named === principal.tenantId) return principal.tenantId;
      if (!isOperator(principal) || (await ctx.queries.tenants(named)).length === 0) throw new NotFoundError('tenant not found', 'tenant_not_found');
      return named;
    };

    app.post(
      '/v1/admin/audit/replay',
      { preHandler: admin, schema: { tags, summary: 'Rebuild usage and billing from the log into a scratch database and compare with the live tables', body: AuditReplayRequest, response: { 200: AuditReportView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const tenantId = await scopeOf(principal, request.body.tenant_id);
        const from = new Date(request.body.from);
        const to = new Date(request.body.to);
        if (!(from.getTime() < to.getTime())) throw new BadRequestError('`from` must be before `to`', 'invalid_period', 'from');
        return auditReplay(auditDeps(ctx), { tenantId, from, to });
      },
    );

    app.get(
      '/v1/admin/audit/history',
      { preHandler: admin, schema: { tags, summary: "Every event that changed a user's or a key's usage or balance, in log order", querystring: AuditHistoryQuery, response: { 200: AuditHistoryView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        if ((q.user_id === undefined) === (q.key_id === undefined)) throw new BadRequestError('name exactly one of user_id and key_id', 'invalid_request', 'user_id');
        const tenantId = await scopeOf(principal, q.tenant_id);
        const kind: 'user' | 'key' = q.user_id !== undefined ? 'user' : 'key';
        const id = (q.user_id ?? q.key_id)!;
        // Another tenant's ids (or unknown ones) are 404: the subject must be this tenant's.
        const db = ctx.sql.db;
        const known =
          kind === 'user'
            ? (await ctx.queries.user(tenantId, id)) ?? (await db.selectFrom('usage_requests').select('request_key').where('tenant_id', '=', tenantId).where('user_id', '=', id).limit(1).executeTakeFirst())
            : (await db.selectFrom('api_keys').select('id').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()) ??
              (await db.selectFrom('usage_requests').select('request_key').where('tenant_id', '=', tenantId).where('key_id', '=', id).limit(1).executeTakeFirst());
        if (!known) throw new NotFoundError(`${kind} not found`, kind === 'user' ? 'user_not_found' : 'key_not_found');
        const { entries, next_after } = await auditHistory({ store: ctx.store, projections: projectionsOf(ctx.config) }, { tenantId, subjectId: id, kind, after: q.after, limit: q.limit });
        return { object: 'list' as const, subject: { kind, id }, data: entries, next_after };
      },
    );
  };
}

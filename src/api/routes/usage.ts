/**
 * Usage queries, read from the `usage` projection: admins for their tenant
 * (`/v1/admin/usage`, `/v1/admin/usage/requests`; operators may name another tenant with
 * `tenant_id`), every user about themselves (`/v1/usage`, `/v1/usage/requests`).
 *
 * Time bounds apply to the request's start time: `from` inclusive, `to` exclusive. Defaults: `to`
 * = the next UTC midnight, `from` = 30 days before `to`. Sums come from the daily rollup when
 * both bounds are UTC midnights (and `hour` is not a group), from the hourly rollup when both are
 * whole UTC hours, otherwise from the per-request rows: always exact.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { UsageRequestsTable } from '../../adapters/sql/schema.js';
import type { Principal } from '../../auth/tokens.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { listUsageRequests, queryUsage, USAGE_DIMENSIONS, type UsageDimension, type UsageFilter } from '../../queries/usage.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { EntityId, isOperator } from './tenants.js';

const DAY_MS = 86_400_000;
export const DEFAULT_USAGE_DAYS = 30;

export const Instant = z.iso.datetime({ offset: true }).or(z.iso.date()).describe('ISO 8601 time (or date = its UTC midnight)');
const dimensions = USAGE_DIMENSIONS.join('|');
const GroupBy = z
  .string()
  .regex(new RegExp(`^(${dimensions})(,(${dimensions}))*$`), `comma-separated: ${USAGE_DIMENSIONS.join(', ')}`)
  .describe(`comma-separated dimensions: ${USAGE_DIMENSIONS.join(', ')} (none: one row of totals)`);
const FilterId = z.string().min(1).max(191);

const TimeQuery = {
  from: Instant.optional().describe('inclusive; default: 30 days before `to`'),
  to: Instant.optional().describe('exclusive; default: the next UTC midnight'),
};
const AdminFilters = {
  user_id: FilterId.optional(),
  key_id: FilterId.optional(),
  channel_id: FilterId.optional(),
  model: FilterId.optional().describe('the model the request was routed by'),
  tenant_id: EntityId.optional().describe("operators only: another tenant's usage"),
};
const SelfFilters = { key_id: FilterId.optional(), model: FilterId.optional() };
const Limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const AdminUsageQuery = z.object({ group_by: GroupBy.optional(), ...TimeQuery, ...AdminFilters, limit: Limit(10_000, 1000) });
export const SelfUsageQuery = z.object({ group_by: GroupBy.optional(), ...TimeQuery, ...SelfFilters, limit: Limit(10_000, 1000) });
const RequestsExtra = {
  status: z.enum(['error', 'success']).optional().describe('only failed / only successful requests'),
  cursor: z.string().max(400).optional().describe('`next_cursor` of the previous page'),
  limit: Limit(1000, 100),
};
export const AdminRequestsQuery = z.object({ ...TimeQuery, ...AdminFilters, ...RequestsExtra });
export const SelfRequestsQuery = z.object({ ...TimeQuery, ...SelfFilters, ...RequestsExtra });

const Sums = {
  requests: z.number().int(),
  errors: z.number().int().describe('requests answered with status >= 400 or cut short'),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  latency_us_sum: z.number().int().describe('sum of latencies, microseconds'),
  avg_latency_ms: z.number().nullable(),
};
export const UsageGroupView = z.object({
  user_id: z.string().nullable().optional(),
  key_id: z.string().nullable().optional(),
  channel_id: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  hour: z.string().optional().describe('UTC hour start'),
  day: z.string().optional().describe('UTC day start'),
  ...Sums,
});
export const UsageView = z.object({
  object: z.literal('usage'),
  tenant_id: z.string(),
  from: z.string(),
  to: z.string(),
  group_by: z.array(z.enum(USAGE_DIMENSIONS)),
  source: z.enum(['usage_daily', 'usage_hourly', 'usage_requests']).describe('the table that answered'),
  data: z.array(UsageGroupView),
  has_more: z.boolean(),
  totals: z.object(Sums),
}).meta({ id: 'Usage' });
export const UsageRequestView = z.object({
  object: z.literal('usage.request'),
  request_id: z.string(),
  tenant_id: z.string(),
  user_id: z.string().nullable(),
  key_id: z.string().nullable(),
  channel_id: z.string().nullable(),
  provider: z.string().nullable(),
  model: z.string(),
  model_requested: z.string(),
  model_served: z.string().nullable(),
  status: z.number().int(),
  error_code: z.string().nullable(),
  error: z.boolean(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  usage_source: z.string(),
  stream: z.boolean(),
  latency_ms: z.number().describe('from the moment the relay gate knew the caller to the usage event (refused requests included)'),
  ttft_ms: z.number().nullable().describe('from the same moment to the first streamed bytes (null: not streamed)'),
  attempts: z.number().int(),
  started_at: z.string(),
  event_id: z.string().describe('the UsageRecorded event'),
});
export const UsageRequestsView = z.object({ object: z.literal('list'), data: z.array(UsageRequestView), has_more: z.boolean(), next_cursor: z.string().nullable() }).meta({ id: 'UsageRequestList' });

export function usageRequestView(row: UsageRequestsTable): z.infer<typeof UsageRequestView> {
  return {
    object: 'usage.request',
    request_id: row.request_id,
    tenant_id: row.tenant_id,
    user_id: row.user_id,
    key_id: row.key_id,
    channel_id: row.channel_id,
    provider: row.provider,
    model: row.model,
    model_requested: row.model_requested,
    model_served: row.model_served,
    status: Number(row.status),
    error_code: row.error_code,
    error: Number(row.is_error) === 1,
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_tokens: Number(row.total_tokens),
    usage_source: row.usage_source,
    stream: Number(row.stream) === 1,
    latency_ms: Number(row.latency_us) / 1000,
    ttft_ms: row.ttft_us === null ? null : Number(row.ttft_us) / 1000,
    attempts: Number(row.attempts),
    started_at: row.started_at,
    event_id: row.event_id,
  };
}

/** `from` / `to` with their defaults; 400 unless from < to. */
export function period(query: { from?: string; to?: string }): { from: Date; to: Date } {
  let to: Date;
  if (query.to !== undefined) to = new Date(query.to);
  else {
    to = new Date();
    to.setUTCHours(0, 0, 0, 0);
    to = new Date(to.getTime() + DAY_MS);
  }
  const from = query.from !== undefined ? new Date(query.from) : new Date(to.getTime() - DEFAULT_USAGE_DAYS * DAY_MS);
  if (!(from.getTime() < to.getTime())) throw new BadRequestError('`from` must be before `to`', 'invalid_period', 'from');
  return { from, to };
}

const encodeCursor = (row: UsageRequestsTable) => Buffer.from(JSON.stringify([row.started_at, row.request_key])).toString('base64url');
function decodeCursor(cursor: string): { startedAt: string; requestKey: string } {
  try {
    const [startedAt, requestKey] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof startedAt === 'string' && typeof requestKey === 'string') return { startedAt, requestKey };
  } catch {
    // fall through
  }
  throw new BadRequestError('invalid cursor', 'invalid_cursor', 'cursor');
}

export function usageRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const anyone = async (request: Parameters<typeof requirePrincipal>[0]) => {
      await requirePrincipal(request, ctx.tokens);
    };

    /** The tenant an admin reads: the caller's, or for operators the one named (404 for anyone else naming another). */
    const scopeOf = async (principal: Principal, named: string | undefined): Promise<string> => {
      if (named === undefined || named === principal.tenantId) return principal.tenantId;
      if (!isOperator(principal) || (await ctx.queries.tenants(named)).length === 0) throw new NotFoundError('tenant not found', 'tenant_not_found');
      return named;
    };

    const summarise = async (filter: UsageFilter, groupByText: string | undefined, limit: number) => {
      const groupBy = [...new Set((groupByText ?? '').split(',').filter(Boolean))] as UsageDimension[];
      const [grouped, total] = await Promise.all([queryUsage(ctx.sql.db, filter, groupBy, limit), queryUsage(ctx.sql.db, filter, [], 1)]);
      return {
        object: 'usage' as const,
        tenant_id: filter.tenantId,
        from: filter.from.toISOString(),
        to: filter.to.toISOString(),
        group_by: groupBy,
        source: grouped.source,
        data: grouped.groups,
        has_more: grouped.hasMore,
        totals: total.groups[0]!,
      };
    };

    const requests = async (filter: UsageFilter, query: { status?: 'error' | 'success'; cursor?: string; limit: number }) => {
      // The tenant turned usage tracking off (relay_settings.usage_tracking): no per-request listing.
      if (!ctx.billing.settings(filter.tenantId).relay_settings.usage_tracking) return { object: 'list' as const, data: [], has_more: false, next_cursor: null };
      const before = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
      const { rows, hasMore } = await listUsageRequests(ctx.sql.db, { ...filter, errors: query.status === undefined ? undefined : query.status === 'error', before }, query.limit);
      return { object: 'list' as const, data: rows.map(usageRequestView), has_more: hasMore, next_cursor: hasMore && rows.length > 0 ? encodeCursor(rows.at(-1)!) : null };
    };

    app.get(
      '/v1/admin/usage',
      { preHandler: admin, schema: { tags: ['usage'], summary: "The tenant's usage, summed and grouped (see README \"Usage\")", querystring: AdminUsageQuery, response: { 200: UsageView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        const tenantId = await scopeOf(principal, q.tenant_id);
        return summarise({ tenantId, ...period(q), userId: q.user_id, keyId: q.key_id, channelId: q.channel_id, model: q.model }, q.group_by, q.limit);
      },
    );

    app.get(
      '/v1/admin/usage/requests',
      { preHandler: admin, schema: { tags: ['usage'], summary: "The tenant's requests, newest first (paginated by cursor)", querystring: AdminRequestsQuery, response: { 200: UsageRequestsView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        const tenantId = await scopeOf(principal, q.tenant_id);
        return requests({ tenantId, ...period(q), userId: q.user_id, keyId: q.key_id, channelId: q.channel_id, model: q.model }, q);
      },
    );

    app.get('/v1/usage', { preHandler: anyone, schema: { tags: ['usage'], summary: 'My usage, summed and grouped', querystring: SelfUsageQuery, response: { 200: UsageView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const q = request.query;
      return summarise({ tenantId: principal.tenantId, ...period(q), userId: principal.userId, keyId: q.key_id, model: q.model }, q.group_by, q.limit);
    });

    app.get('/v1/usage/requests', { preHandler: anyone, schema: { tags: ['usage'], summary: 'My requests, newest first', querystring: SelfRequestsQuery, response: { 200: UsageRequestsView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const q = request.query;
      return requests({ tenantId: principal.tenantId, ...period(q), userId: principal.userId, keyId: q.key_id, model: q.model }, q);
    });
  };
}

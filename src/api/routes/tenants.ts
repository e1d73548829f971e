/**
 * Admin API of tenants. Operators — admins of the `default` tenant — create, list, disable and
 * enable tenants. Admins of any other tenant see only their own tenant: another tenant's id is
 * 404 (as if it did not exist), and operator-only actions on their own tenant are 403.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { preValidationAsyncHookHandler } from 'fastify';
import type { TenantsTable } from '../../adapters/sql/schema.js';
import { Permission } from '../../auth/rbac.js';
import type { Principal, TokenService } from '../../auth/tokens.js';
import { DEFAULT_TENANT, tenants } from '../../commands/tenants/decider.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../errors.js';
import { principalOrNull, requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';

/** Ids as they appear in stream names. */
export const EntityId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, - and _ (at most 64)');
const TenantId = z.object({ tenant_id: EntityId });

export const CreateTenantRequest = z.object({ name: z.string().trim().min(1).max(200) }).meta({ id: 'CreateTenantRequest' });

export const TenantView = z.object({
  id: z.string(),
  object: z.literal('tenant'),
  name: z.string(),
  disabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Tenant' });
export type TenantView = z.infer<typeof TenantView>;

export function tenantView(row: TenantsTable): TenantView {
  return { id: row.tenant_id, object: 'tenant', name: row.name, disabled: row.disabled === 1, created_at: row.created_at, updated_at: row.updated_at };
}

/** Operators: admins (or, with RBAC off, anyone) of the default tenant. */
export function isOperator(principal: Principal): boolean {
  return principal.tenantId === DEFAULT_TENANT;
}

/** The 403 for an admin (or user) who is not an operator naming a tenant other than its own. */
export const tenantNotAllowed = () => new ForbiddenError('only operators (admins of the default tenant) may name another tenant with tenant_id', 'tenant_not_allowed');

/** The tenant a request acts on: `named` (operators only, else 403 tenant_not_allowed) or the caller's own. */
export function actingTenant(principal: Principal, named: string | undefined): string {
  if (named === undefined || named === principal.tenantId) return principal.tenantId;
  if (!isOperator(principal)) throw tenantNotAllowed();
  return named;
}

function namedTenant(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const named = (value as Record<string, unknown>).tenant_id;
  return named === undefined ? undefined : String(named);
}

/**
 * preValidation hook for endpoints that always work in the caller's tenant (API keys, billing): a
 * `tenant_id` naming another tenant, in the query string or the JSON body, is refused rather than
 * dropped by validation and answered about the caller's own tenant — 403 tenant_not_allowed for
 * non-operators, 400 for operators (these endpoints cannot act on another tenant). Runs before
 * validation, which would strip the unknown field; a caller without credentials passes on to the
 * route's own guard (401).
 */
export function callerTenantOnly(tokens: TokenService): preValidationAsyncHookHandler {
  return async (request) => {
    const named = namedTenant(request.query) ?? namedTenant(request.body);
    if (named === undefined) return;
    const principal = await principalOrNull(request, tokens);
    if (!principal || named === principal.tenantId) return;
    if (!isOperator(principal)) throw tenantNotAllowed();
    throw new BadRequestError('this endpoint works in your own tenant only: tenant_id is not accepted', 'tenant_not_supported', 'tenant_id');
  };
}

const TenantList = z.object({ object: z.literal('list'), data: z.array(TenantView) }).meta({ id: 'TenantList' });

export function tenantRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const manage = requirePermission(ctx, Permission.tenantsManage);
    const tags = ['tenants'];

    const settle = async (position: number | null) => {
      if (position === null) return;
      await Promise.all([ctx.runner.waitFor(position, { projections: ['accounts'] }), ctx.views.access.waitFor(position)]);
    };
    /** The tenant as `principal` may see it: its own, or any for operators; otherwise 404. */
    const visible = async (principal: Principal, id: string): Promise<TenantsTable> => {
      const [row] = isOperator(principal) || principal.tenantId === id ? await ctx.queries.tenants(id) : [];
      if (!row) throw new NotFoundError('tenant not found', 'tenant_not_found');
      return row;
    };
    const operatorOnly = (principal: Principal) => {
      if (!isOperator(principal)) throw new ForbiddenError('only operators (admins of the default tenant) may do this', 'forbidden');
    };

    app.post('/v1/admin/tenants', { preHandler: manage, schema: { tags, summary: 'Create a tenant (operators only)', body: CreateTenantRequest, response: { 201: TenantView } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      operatorOnly(principal);
      const id = `ten_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
      const result = await ctx.commands.execute(tenants, id, { type: 'CreateTenant', tenantId: id, name: request.body.name }, { tenantId: id, causationId: request.id });
      await settle(result.position);
      return reply.code(201).send(tenantView(await visible(principal, id)));
    });

    app.get(
      '/v1/admin/tenants',
      { preHandler: manage, schema: { tags, summary: "List tenants (operators: all; others: their own)", response: { 200: TenantList } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const rows = await ctx.queries.tenants(isOperator(principal) ? undefined : principal.tenantId);
        return { object: 'list' as const, data: rows.map(tenantView) };
      },
    );

    app.get('/v1/admin/tenants/:tenant_id', { preHandler: manage, schema: { tags, summary: 'Get a tenant', params: TenantId, response: { 200: TenantView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return tenantView(await visible(principal, request.params.tenant_id));
    });

    for (const action of ['disable', 'enable'] as const) {
      app.post(
        `/v1/admin/tenants/:tenant_id/${action}`,
        {
          preHandler: manage,
          schema: {
            tags,
            summary: action === 'disable' ? "Disable a tenant: its users are refused at once, everywhere (operators only)" : 'Enable a disabled tenant again (operators only)',
            params: TenantId,
            response: { 200: TenantView },
          },
        },
        async (request) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const id = request.params.tenant_id;
          await visible(principal, id); // another tenant's id: 404 before anything else
          operatorOnly(principal);
          const command = action === 'disable' ? { type: 'DisableTenant' as const, tenantId: id, by: principal.userId } : { type: 'EnableTenant' as const, by: principal.userId };
          const result = await ctx.commands.execute(tenants, id, command, { tenantId: id, causationId: request.id });
          await settle(result.position);
          return tenantView(await visible(principal, id));
        },
      );
    }
  };
}

/**
 * Billing API: the tenant's price table (`/v1/admin/pricing`), credits (`/v1/admin/credits`,
 * `/v1/credits`), the ledger and statements (`/v1/admin/billing/*`, `/v1/billing/*`) and the
 * tenant's operational settings (`/v1/admin/settings`). Admins act on their own tenant only:
 * another tenant's user ids are 404. Amounts are integer micro-credits inside; the API takes
 * credits as decimal strings or numbers (at most 6 decimals) and shows both forms.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { formatCredits, parseCredits } from '../../billing/money.js';
import type { Price } from '../../billing/pricing.js';
import { balanceOf, findSubscription, ledgerCsv, ledgerEntryAt, listBalances, listLedger, loadPricing, loadSettings, statement, subscriptionView, type LedgerFilter } from '../../queries/billing.js';
import { credits } from '../../commands/credits/decider.js';
import { pricing } from '../../commands/pricing/decider.js';
import { settings } from '../../commands/settings/decider.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import {
  BILLING_MANAGE,
  BulkPricingInput,
  CreditBalanceView,
  CreditMovementInput,
  CreditMovementView,
  LedgerList,
  LedgerQuery,
  ModelPriceInput,
  PriceInput,
  PricingView,
  SETTINGS_MANAGE,
  SettingsInput,
  SettingsView,
  StatementQuery,
  StatementView,
} from './billing-views.js';
import { callerTenantOnly, EntityId } from './tenants.js';

const UserId = z.object({ user_id: EntityId });
const ModelParam = z.object({ model: z.string().min(1).max(200) });

/** A price from its input: credits -> micro-credits, never negative. */
export function priceFrom(input: z.infer<typeof PriceInput>, prefix = ''): Price {
  const field = (value: string | number | undefined, name: string) => {
    if (value === undefined) return 0;
    const micro = parseCredits(value, `${prefix}${name}`);
    if (micro < 0) throw new BadRequestError(`${prefix}${name} must not be negative`, 'invalid_amount', `${prefix}${name}`);
    return micro;
  };
  return { input_per_1m_micro: field(input.input_price, 'input_price'), output_per_1m_micro: field(input.output_price, 'output_price'), per_request_micro: field(input.per_request_price, 'per_request_price') };
}

/** An ISO date or time from a query parameter, normalised (a 400 naming it otherwise). */
function timeParam(value: string | undefined, param: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new BadRequestError(`${param} must be an ISO date or time`, 'invalid_request', param);
  return new Date(t).toISOString();
}

const CreditBalanceList = z.object({ object: z.literal('list'), data: z.array(CreditBalanceView.omit({ subscription: true })) }).meta({ id: 'CreditBalanceList' });

export function billingRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preValidation', callerTenantOnly(ctx.tokens));
    const manage = requirePermission(ctx, BILLING_MANAGE);
    const manageSettings = requirePermission(ctx, SETTINGS_MANAGE);
    const signedIn = async (request: Parameters<typeof requirePrincipal>[0]) => {
      await requirePrincipal(request, ctx.tokens);
    };
    const tags = ['billing'];

    /** Read-your-writes: the billing read model and this instance's live view have the commit. */
    const settle = async (position: number | null) => {
      if (position === null) return;
      await Promise.all([ctx.runner.waitFor(position, { projections: ['billing'] }), ctx.views.billing.waitFor(position)]);
    };
    /** A user of the caller's tenant, else 404 (another tenant's user looks missing). */
    const userOfTenant = async (tenantId: string, userId: string) => {
      const user = await ctx.queries.user(tenantId, userId);
      if (!user) throw new NotFoundError(`user ${userId} not found`, 'user_not_found');
      return user;
    };
    const balanceView = async (tenantId: string, userId: string) => {
      const { balance_micro, updated_at } = await balanceOf(ctx.sql.db, tenantId, userId);
      const sub = await findSubscription(ctx.sql.db, tenantId, userId);
      return { object: 'credit_balance' as const, tenant_id: tenantId, user_id: userId, balance: formatCredits(balance_micro), balance_micro, updated_at, subscription: sub ? subscriptionView(sub) : null };
    };
    const sendLedger = async (reply: FastifyReply, filter: LedgerFilter, format: 'json' | 'csv') => {
      const entries = await listLedger(ctx.sql.db, filter);
      if (format === 'json') return { object: 'list' as const, data: entries };
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="ledger-${filter.tenantId}${filter.userId ? `-${filter.userId}` : ''}.csv"`)
        .send(ledgerCsv(entries));
    };

    // --- pricing -------------------------------------------------------------------------------

    app.get('/v1/admin/pricing', { preHandler: manage, schema: { tags, summary: "The tenant's price table", response: { 200: PricingView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return loadPricing(ctx.sql.db, principal.tenantId);
    });

    const setPrices = async (request: { id: string }, tenantId: string, command: Parameters<typeof pricing.decide>[0]) => {
      const result = await ctx.commands.execute(pricing, tenantId, command, { tenantId, causationId: request.id });
      await settle(result.position);
      return loadPricing(ctx.sql.db, tenantId);
    };

    app.put(
      '/v1/admin/pricing',
      { preHandler: manage, schema: { tags, summary: 'Set the default price and/or several model prices at once (models not named keep theirs)', body: BulkPricingInput, response: { 200: PricingView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const models = Object.fromEntries(Object.entries(request.body.models ?? {}).map(([m, p]) => [m, priceFrom(p, `models.${m}.`)]));
        const def = request.body.default ? priceFrom(request.body.default, 'default.') : undefined;
        return setPrices(request, principal.tenantId, { type: 'SetPrices', default: def, models, by: principal.userId });
      },
    );

    app.put('/v1/admin/pricing/default', { preHandler: manage, schema: { tags, summary: 'Set the price of every model without its own', body: PriceInput, response: { 200: PricingView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return setPrices(request, principal.tenantId, { type: 'SetDefaultPrice', price: priceFrom(request.body), by: principal.userId });
    });

    app.post('/v1/admin/pricing/models', { preHandler: manage, schema: { tags, summary: "Set a model's price (applies from now on)", body: ModelPriceInput, response: { 200: PricingView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return setPrices(request, principal.tenantId, { type: 'SetModelPrice', model: request.body.model, price: priceFrom(request.body), by: principal.userId });
    });

    app.put(
      '/v1/admin/pricing/models/:model',
      { preHandler: manage, schema: { tags, summary: "Set a model's price (applies from now on)", params: ModelParam, body: PriceInput, response: { 200: PricingView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return setPrices(request, principal.tenantId, { type: 'SetModelPrice', model: request.params.model, price: priceFrom(request.body), by: principal.userId });
      },
    );

    app.delete(
      '/v1/admin/pricing/models/:model',
      { preHandler: manage, schema: { tags, summary: "Remove a model's price (it falls back to the default)", params: ModelParam, response: { 200: PricingView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return setPrices(request, principal.tenantId, { type: 'RemoveModelPrice', model: request.params.model, by: principal.userId });
      },
    );

    // --- credits -------------------------------------------------------------------------------

    for (const kind of ['topup', 'adjust'] as const) {
      app.post(
        `/v1/admin/credits/:user_id/${kind}`,
        {
          preHandler: manage,
          schema: {
            tags,
            summary: kind === 'topup' ? "Top up a user's credits (amount > 0, with a reason)" : "Adjust a user's credits (amount + or -, with a reason)",
            params: UserId,
            body: CreditMovementInput,
            response: { 200: CreditMovementView },
          },
        },
        async (request) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const user = await userOfTenant(principal.tenantId, request.params.user_id);
          const amountMicro = parseCredits(request.body.amount, 'amount');
          const result = await ctx.commands.execute(
            credits,
            user.id,
            { type: kind === 'topup' ? 'TopUpCredits' : 'AdjustCredits', userId: user.id, amountMicro, reason: request.body.reason, by: principal.userId },
            { tenantId: principal.tenantId, causationId: request.id },
          );
          await settle(result.position);
          const entry = result.position === null ? null : await ledgerEntryAt(ctx.sql.db, principal.tenantId, result.position);
          return { ...(await balanceView(principal.tenantId, user.id)), entry };
        },
      );
    }

    app.get(
      '/v1/admin/credits',
      { preHandler: manage, schema: { tags, summary: 'Credit balances of the tenant’s users (those with any movement)', response: { 200: CreditBalanceList } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const rows = await listBalances(ctx.sql.db, principal.tenantId);
        return { object: 'list' as const, data: rows.map((r) => ({ object: 'credit_balance' as const, tenant_id: principal.tenantId, user_id: r.user_id, balance: formatCredits(r.balance_micro), balance_micro: r.balance_micro, updated_at: r.updated_at })) };
      },
    );

    app.get('/v1/admin/credits/:user_id', { preHandler: manage, schema: { tags, summary: "A user's credit balance and subscription", params: UserId, response: { 200: CreditBalanceView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const user = await userOfTenant(principal.tenantId, request.params.user_id);
      return balanceView(principal.tenantId, user.id);
    });

    app.get('/v1/credits', { preHandler: signedIn, schema: { tags, summary: 'My credit balance and subscription', response: { 200: CreditBalanceView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return balanceView(principal.tenantId, principal.userId);
    });

    // --- ledger and statements -------------------------------------------------------------------

    app.get(
      '/v1/admin/billing/ledger',
      {
        preHandler: manage,
        schema: {
          tags,
          summary: "The tenant's ledger in log order (format=json|csv, from/to, user_id, type)",
          querystring: LedgerQuery.extend({ user_id: EntityId.optional() }),
          response: { 200: LedgerList },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const q = request.query;
        if (q.user_id !== undefined) await userOfTenant(principal.tenantId, q.user_id);
        return sendLedger(reply, { tenantId: principal.tenantId, userId: q.user_id, from: timeParam(q.from, 'from'), to: timeParam(q.to, 'to'), type: q.type, limit: q.limit }, q.format);
      },
    );

    app.get('/v1/billing/ledger', { preHandler: signedIn, schema: { tags, summary: 'My ledger entries (format=json|csv, from/to, type)', querystring: LedgerQuery, response: { 200: LedgerList } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const q = request.query;
      return sendLedger(reply, { tenantId: principal.tenantId, userId: principal.userId, from: timeParam(q.from, 'from'), to: timeParam(q.to, 'to'), type: q.type, limit: q.limit }, q.format);
    });

    app.get(
      '/v1/admin/billing/statements',
      { preHandler: manage, schema: { tags, summary: 'Statement of a calendar month per user (opening, movements by type, closing, requests)', querystring: StatementQuery.extend({ user_id: EntityId.optional() }), response: { 200: StatementView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        if (request.query.user_id !== undefined) await userOfTenant(principal.tenantId, request.query.user_id);
        return statement(ctx.sql.db, principal.tenantId, request.query.period, request.query.user_id);
      },
    );

    app.get('/v1/billing/statements', { preHandler: signedIn, schema: { tags, summary: 'My statement of a calendar month', querystring: StatementQuery, response: { 200: StatementView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return statement(ctx.sql.db, principal.tenantId, request.query.period, principal.userId);
    });

    // --- settings -------------------------------------------------------------------------------

    const settingsView = async (tenantId: string) => {
      const loaded = await loadSettings(ctx.sql.db, tenantId);
      return { object: 'settings' as const, ...loaded, relay_settings: { enabled: loaded.relay_api_enabled, ...loaded.relay_settings } };
    };

    app.get('/v1/admin/settings', { preHandler: manageSettings, schema: { tags: ['admin'], summary: "The tenant's operational settings", response: { 200: SettingsView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return settingsView(principal.tenantId);
    });

    for (const method of ['put', 'patch'] as const) {
      app[method](
        '/v1/admin/settings',
        { preHandler: manageSettings, schema: { tags: ['admin'], summary: 'Change operational settings (fields given change; applied on every instance within one bus delivery)', body: SettingsInput, response: { 200: SettingsView } } },
        async (request) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const { relay_settings: relay, ...rest } = request.body;
          const { enabled, ...relayChange } = relay ?? {};
          if (enabled !== undefined && rest.relay_api_enabled !== undefined && enabled !== rest.relay_api_enabled) {
            throw new BadRequestError('relay_api_enabled and relay_settings.enabled are the same switch: give one, or the same value', 'conflicting_fields', 'relay_settings.enabled');
          }
          const command = { type: 'ChangeSettings' as const, ...rest, relay_api_enabled: rest.relay_api_enabled ?? enabled, relay_settings: relay ? relayChange : undefined, by: principal.userId };
          const result = await ctx.commands.execute(settings, principal.tenantId, command, { tenantId: principal.tenantId, causationId: request.id });
          await settle(result.position);
          return settingsView(principal.tenantId);
        },
      );
    }
  };
}

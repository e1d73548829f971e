/**
 * Subscription plans (`/v1/admin/plans`; users list them on `/v1/plans`) and subscriptions
 * (`/v1/subscriptions` for oneself, `/v1/admin/subscriptions/{user_id}` for admins). Subscribing
 * and renewing charge the plan's price to the user's credits (a `subscription_fee` ledger entry)
 * and are refused with 402 insufficient_credits when the balance does not cover it.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatCredits, parseCredits } from '../../billing/money.js';
import { findPlan, findSubscription, listPlans, listSubscriptions, planView, subscriptionView, termsOf } from '../../queries/billing.js';
import type { PlanQuota } from '../../commands/plans/events.js';
import { plans } from '../../commands/plans/decider.js';
import { subscriptions, type SubscriptionCommand } from '../../commands/subscriptions/decider.js';
import { AppError, BadRequestError, NotFoundError } from '../../errors.js';
import { requirePermission, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { BILLING_MANAGE, PlanInput, PlanUpdateInput, PlanView, SubscriptionView } from './billing-views.js';
import { EntityId } from './tenants.js';

const PlanId = z.object({ plan_id: EntityId });
const UserId = z.object({ user_id: EntityId });
const SubscribeInput = z.object({ plan_id: EntityId });

const newId = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;

function quotasFrom(input: z.infer<typeof PlanInput>['quotas']): PlanQuota[] {
  return input.map((q) => ({ models: q.models, requests: q.requests ?? null, tokens: q.tokens ?? null }));
}

function priceMicro(value: string | number): number {
  const micro = parseCredits(value, 'price');
  if (micro < 0) throw new BadRequestError('price must not be negative', 'invalid_amount', 'price');
  return micro;
}

const PlanList = z.object({ object: z.literal('list'), data: z.array(PlanView) }).meta({ id: 'PlanList' });

const SubscriptionList = z.object({ object: z.literal('list'), data: z.array(SubscriptionView) }).meta({ id: 'SubscriptionList' });

export function subscriptionRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const manage = requirePermission(ctx, BILLING_MANAGE);
    const signedIn = async (request: Parameters<typeof requirePrincipal>[0]) => {
      await requirePrincipal(request, ctx.tokens);
    };

    const settle = async (position: number | null) => {
      if (position === null) return;
      await Promise.all([ctx.runner.waitFor(position, { projections: ['billing'] }), ctx.views.billing.waitFor(position)]);
    };
    const planOf = async (tenantId: string, planId: string) => {
      const row = await findPlan(ctx.sql.db, tenantId, planId);
      if (!row) throw new NotFoundError(`plan ${planId} not found`, 'plan_not_found');
      return row;
    };

    // --- plans ----------------------------------------------------------------------------------

    app.post('/v1/admin/plans', { preHandler: manage, schema: { tags: ['billing'], summary: 'Create a subscription plan', body: PlanInput, response: { 201: PlanView } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const id = newId('plan');
      const b = request.body;
      const result = await ctx.commands.execute(
        plans,
        id,
        { type: 'CreatePlan', planId: id, name: b.name, description: b.description ?? null, period: b.period, quotas: quotasFrom(b.quotas), priceMicro: priceMicro(b.price), by: principal.userId },
        { tenantId: principal.tenantId, causationId: request.id },
      );
      await settle(result.position);
      return reply.code(201).send(planView(await planOf(principal.tenantId, id)));
    });

    app.get(
      '/v1/admin/plans',
      {
        preHandler: manage,
        schema: { tags: ['billing'], summary: "The tenant's plans", querystring: z.object({ include_deleted: z.enum(['true', 'false']).optional() }), response: { 200: PlanList } },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return { object: 'list' as const, data: await listPlans(ctx.sql.db, principal.tenantId, request.query.include_deleted === 'true') };
      },
    );

    app.get('/v1/plans', { preHandler: signedIn, schema: { tags: ['billing'], summary: 'Plans I can subscribe to', response: { 200: PlanList } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return { object: 'list' as const, data: await listPlans(ctx.sql.db, principal.tenantId) };
    });

    app.get('/v1/admin/plans/:plan_id', { preHandler: manage, schema: { tags: ['billing'], summary: 'A plan', params: PlanId, response: { 200: PlanView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return planView(await planOf(principal.tenantId, request.params.plan_id));
    });

    app.patch(
      '/v1/admin/plans/:plan_id',
      { preHandler: manage, schema: { tags: ['billing'], summary: 'Change a plan (new subscriptions and renewals get the new terms)', params: PlanId, body: PlanUpdateInput, response: { 200: PlanView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await planOf(principal.tenantId, request.params.plan_id);
        const b = request.body;
        const result = await ctx.commands.execute(
          plans,
          row.id,
          {
            type: 'UpdatePlan',
            name: b.name,
            description: b.description,
            period: b.period,
            quotas: b.quotas === undefined ? undefined : quotasFrom(b.quotas),
            priceMicro: b.price === undefined ? undefined : priceMicro(b.price),
            by: principal.userId,
          },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        return planView(await planOf(principal.tenantId, row.id));
      },
    );

    app.delete(
      '/v1/admin/plans/:plan_id',
      {
        preHandler: manage,
        schema: { tags: ['billing'], summary: 'Delete a plan (running subscriptions keep their terms until renewal)', params: PlanId, response: { 200: z.object({ id: z.string(), object: z.literal('plan'), deleted: z.literal(true) }) } },
      },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const row = await planOf(principal.tenantId, request.params.plan_id);
        const result = await ctx.commands.execute(plans, row.id, { type: 'DeletePlan', by: principal.userId }, { tenantId: principal.tenantId, causationId: request.id });
        await settle(result.position);
        return { id: row.id, object: 'plan' as const, deleted: true as const };
      },
    );

    // --- subscriptions --------------------------------------------------------------------------

    /** The fee must be covered by the balance (from memory: the billing live view). */
    const requireFunds = (userId: string, priceMicro: number) => {
      const balance = ctx.billing.balanceOf(userId);
      if (priceMicro > 0 && balance < priceMicro) {
        throw new AppError(402, 'payment_required', 'insufficient_credits', `the plan costs ${formatCredits(priceMicro)} credits per period and the credit balance is ${formatCredits(balance)} credits; top up first`);
      }
    };
    const view = async (tenantId: string, userId: string) => {
      const row = await findSubscription(ctx.sql.db, tenantId, userId);
      if (!row) throw new NotFoundError('no subscription', 'subscription_not_found');
      return subscriptionView(row);
    };
    const run = async (requestId: string, tenantId: string, userId: string, command: SubscriptionCommand) => {
      const result = await ctx.commands.execute(subscriptions, userId, command, { tenantId, causationId: requestId });
      await settle(result.position);
      return view(tenantId, userId);
    };
    const subscribe = async (requestId: string, tenantId: string, userId: string, planId: string, by: string) => {
      const terms = termsOf(await planOf(tenantId, planId));
      requireFunds(userId, terms.price_micro);
      return run(requestId, tenantId, userId, { type: 'Subscribe', subscriptionId: newId('sub'), userId, terms, now: new Date().toISOString(), by });
    };
    const renew = async (requestId: string, tenantId: string, userId: string, by: string) => {
      const current = await findSubscription(ctx.sql.db, tenantId, userId);
      if (!current) throw new NotFoundError('no subscription to renew', 'subscription_not_found');
      // The plan's current terms (a deleted plan cannot be renewed: subscribe to another).
      const terms = termsOf(await planOf(tenantId, current.plan_id));
      requireFunds(userId, terms.price_micro);
      return run(requestId, tenantId, userId, { type: 'RenewSubscription', userId, terms, now: new Date().toISOString(), by });
    };
    const cancel = (requestId: string, tenantId: string, userId: string, by: string) => run(requestId, tenantId, userId, { type: 'CancelSubscription', userId, now: new Date().toISOString(), by });

    const mine = { tags: ['billing'] };
    app.post('/v1/subscriptions', { preHandler: signedIn, schema: { ...mine, summary: 'Subscribe to a plan (charges its price)', body: SubscribeInput, response: { 201: SubscriptionView } } }, async (request, reply) => {
      const p = await requirePrincipal(request, ctx.tokens);
      return reply.code(201).send(await subscribe(request.id, p.tenantId, p.userId, request.body.plan_id, p.userId));
    });
    app.get('/v1/subscriptions', { preHandler: signedIn, schema: { ...mine, summary: 'My subscription (404 when none)', response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      return view(p.tenantId, p.userId);
    });
    app.post('/v1/subscriptions/renew', { preHandler: signedIn, schema: { ...mine, summary: 'Start a new period now (fee charged, quotas reset)', response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      return renew(request.id, p.tenantId, p.userId, p.userId);
    });
    app.post('/v1/subscriptions/cancel', { preHandler: signedIn, schema: { ...mine, summary: 'Cancel: coverage ends now (no refund)', response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      return cancel(request.id, p.tenantId, p.userId, p.userId);
    });

    const admin = { tags: ['billing'] };
    const userOfTenant = async (tenantId: string, userId: string) => {
      if (!(await ctx.queries.user(tenantId, userId))) throw new NotFoundError(`user ${userId} not found`, 'user_not_found');
    };
    app.get('/v1/admin/subscriptions', { preHandler: manage, schema: { ...admin, summary: "The tenant's subscriptions", response: { 200: SubscriptionList } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      return { object: 'list' as const, data: await listSubscriptions(ctx.sql.db, p.tenantId) };
    });
    app.get('/v1/admin/subscriptions/:user_id', { preHandler: manage, schema: { ...admin, summary: "A user's subscription", params: UserId, response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      await userOfTenant(p.tenantId, request.params.user_id);
      return view(p.tenantId, request.params.user_id);
    });
    app.post(
      '/v1/admin/subscriptions/:user_id',
      { preHandler: manage, schema: { ...admin, summary: 'Subscribe a user to a plan (charges its price to the user)', params: UserId, body: SubscribeInput, response: { 201: SubscriptionView } } },
      async (request, reply) => {
        const p = await requirePrincipal(request, ctx.tokens);
        await userOfTenant(p.tenantId, request.params.user_id);
        return reply.code(201).send(await subscribe(request.id, p.tenantId, request.params.user_id, request.body.plan_id, p.userId));
      },
    );
    app.post('/v1/admin/subscriptions/:user_id/renew', { preHandler: manage, schema: { ...admin, summary: "Renew a user's subscription", params: UserId, response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      await userOfTenant(p.tenantId, request.params.user_id);
      return renew(request.id, p.tenantId, request.params.user_id, p.userId);
    });
    app.post('/v1/admin/subscriptions/:user_id/cancel', { preHandler: manage, schema: { ...admin, summary: "Cancel a user's subscription", params: UserId, response: { 200: SubscriptionView } } }, async (request) => {
      const p = await requirePrincipal(request, ctx.tokens);
      await userOfTenant(p.tenantId, request.params.user_id);
      return cancel(request.id, p.tenantId, request.params.user_id, p.userId);
    });
  };
}

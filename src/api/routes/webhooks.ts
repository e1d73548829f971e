/**
 * Webhooks (`/v1/admin/webhooks`, issue 19): a tenant's admins say where to be told what happens
 * (signed payloads in the webhook's api_version format: src/webhooks/payloads.ts), see each delivery and ask for one again. Every
 * route works within the admin's own tenant; another tenant's webhook is a 404 like a missing one.
 *
 * The secret that signs deliveries is sealed before it reaches the command; it is never answered
 * again after the create answer that made it.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { WebhookDeliveriesTable, WebhooksTable } from '../../adapters/sql/schema.js';
import { checkWebhookUrl, webhookNotFound, webhooks } from '../../commands/webhooks/decider.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_PAYLOAD_VERSIONS, WebhookSubscription } from '../../commands/webhooks/events.js';
import { SecretBox } from '../../crypto/secret-box.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { DELIVERY_STATUSES, findDelivery, findWebhook, listDeliveries, listWebhooks } from '../../queries/webhooks.js';
import { deliveryIdOf, payloadVersionOf, testNoticeKey } from '../../webhooks/payloads.js';
import { generateWebhookSecret } from '../../webhooks/signature.js';
import { assertPublicHost, hostOf, TargetNotAllowedError } from '../../webhooks/targets.js';
import { apiVersionOf } from '../api-version.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { errorResponseSchema } from '../errors.js';

const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'an id');
const WebhookParams = z.object({ id: Id });
const DeliveryParams = z.object({ id: Id, delivery_id: Id });

const Events = z
  .array(WebhookSubscription)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length + 1)
  .describe(`payload types to receive: ${WEBHOOK_EVENT_TYPES.join(', ')}; or "*" for every type (new ones included)`);
const PayloadVersion = z
  .enum(WEBHOOK_PAYLOAD_VERSIONS)
  .describe('payload format (docs/api-versions.md): v2 {id, type, api_version, created_at, tenant_id, data}; v1 (legacy) {id, event, api_version, timestamp, tenant, data}');
const Secret = z.string().min(16).max(256).describe('signs each delivery (HMAC-SHA256); at least 16 characters');

export const CreateWebhookRequest = z.object({
  url: z.string().max(2048).describe('http(s) URL; private, loopback and link-local targets are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS'),
  events: Events,
  secret: Secret.optional().describe('omitted: one is generated and answered once, in this answer only'),
  enabled: z.boolean().default(true),
  api_version: PayloadVersion.optional().describe("payload format; omitted: the request's API version (API-Version header, else API_VERSION)"),
});

export const UpdateWebhookRequest = z.object({
  url: z.string().max(2048).optional(),
  events: Events.optional(),
  secret: Secret.optional().describe('a new secret (rotation): deliveries are signed with it from now on'),
  enabled: z.boolean().optional(),
  api_version: PayloadVersion.optional(),
});

export const WebhookView = z.object({
  id: z.string(),
  object: z.literal('webhook'),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  api_version: PayloadVersion,
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Webhook' });
type WebhookView = z.infer<typeof WebhookView>;

const CreatedWebhook = WebhookView.extend({ secret: z.string().optional().describe('only when generated: keep it, it is never shown again') }).meta({ id: 'CreatedWebhook' });

export const DeliveryView = z.object({
  id: z.string(),
  object: z.literal('webhook.delivery'),
  webhook_id: z.string(),
  event_id: z.string().describe('the payload id: the same on every attempt (idempotency key)'),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  response_code: z.number().nullable().describe("the last attempt's HTTP status (null: no answer)"),
  last_error: z.string().nullable(),
  created_at: z.string(),
  first_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  next_attempt_at: z.string().nullable().describe('pending: when the next attempt is due'),
  delivered_at: z.string().nullable(),
  payload: z.record(z.string(), z.unknown()).describe("the payload sent, in the webhook's api_version format"),
}).meta({ id: 'WebhookDelivery' });
type DeliveryView = z.infer<typeof DeliveryView>;

const DeliveryList = z.object({
  object: z.literal('list'),
  data: z.array(DeliveryView),
  has_more: z.boolean(),
  next_cursor: z.string().nullable().describe('pass as `after` for the next page'),
}).meta({ id: 'WebhookDeliveryList' });

const DeliveryQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  after: Id.optional().describe('a delivery id: the page continues after it'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export function webhookView(row: WebhooksTable): WebhookView {
  return {
    id: row.id,
    object: 'webhook',
    url: row.url,
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled === 1,
    api_version: payloadVersionOf(row.api_version),
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function deliveryView(row: WebhookDeliveriesTable): DeliveryView {
  return {
    id: row.id,
    object: 'webhook.delivery',
    webhook_id: row.webhook_id,
    event_id: row.payload_id,
    event_type: row.event_type,
    status: row.status as DeliveryView['status'],
    attempts: Number(row.attempts),
    response_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    created_at: row.created_at,
    first_attempt_at: row.first_attempt_at,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

const WebhookList = z.object({ object: z.literal('list'), data: z.array(WebhookView) }).meta({ id: 'WebhookList' });

export function webhookRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const tags = ['webhooks'];
    const db = ctx.sql.db;
    const box = new SecretBox(ctx.config.secret, 'webhook-secrets');
    const badRequest = errorResponseSchema('invalid_request, invalid_webhook_url, invalid_webhook_events, webhook_target_not_allowed, webhook_target_unresolvable');
    const notFound = errorResponseSchema('webhook_not_found, delivery_not_found');

    /** The URL's form, then (unless private targets are allowed) every address its host resolves to. */
    const checkTarget = async (url: string): Promise<void> => {
      const checked = new URL(checkWebhookUrl(url));
      if (ctx.config.webhooks.allowPrivateTargets) return;
      try {
        await assertPublicHost(hostOf(checked));
      } catch (error) {
        if (error instanceof TargetNotAllowedError) throw new BadRequestError(error.message, 'webhook_target_not_allowed', 'url');
        throw new BadRequestError(`the host of url does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`, 'webhook_target_unresolvable', 'url');
      }
    };
    const settle = async (position: number | null) => {
      if (position !== null) await ctx.runner.waitFor(position, { projections: ['webhooks'] });
    };
    const read = async (tenantId: string, id: string): Promise<WebhooksTable> => {
      const row = await findWebhook(db, tenantId, id);
      if (!row) throw webhookNotFound();
      return row;
    };

    app.post(
      '/v1/admin/webhooks',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Create a webhook',
          description: 'Deliveries are POSTed with `X-Switchyard-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` and the payload id as `X-Switchyard-Event-Id` / `Idempotency-Key`.',
          body: CreateWebhookRequest,
          response: { 201: CreatedWebhook, 400: badRequest },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const body = request.body;
        await checkTarget(body.url);
        const generated = body.secret === undefined ? generateWebhookSecret() : null;
        const id = `wh_${randomBytes(12).toString('hex')}`;
        const result = await ctx.commands.execute(
          webhooks,
          id,
          { type: 'CreateWebhook', webhookId: id, url: body.url, events: body.events, secretSealed: box.seal(body.secret ?? generated!), enabled: body.enabled, apiVersion: body.api_version ?? apiVersionOf(request.headers, ctx.config.api.version), by: principal.userId },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        const view = webhookView(await read(principal.tenantId, id));
        return reply.code(201).send(generated === null ? view : { ...view, secret: generated });
      },
    );

    app.get('/v1/admin/webhooks', { preHandler: admin, schema: { tags, summary: "The tenant's webhooks", response: { 200: WebhookList } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return { object: 'list' as const, data: (await listWebhooks(db, principal.tenantId)).map(webhookView) };
    });

    app.get('/v1/admin/webhooks/:id', { preHandler: admin, schema: { tags, summary: 'A webhook (never its secret)', params: WebhookParams, response: { 200: WebhookView, 404: notFound } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return webhookView(await read(principal.tenantId, request.params.id));
    });

    app.patch(
      '/v1/admin/webhooks/:id',
      { preHandler: admin, schema: { tags, summary: 'Change a webhook', params: WebhookParams, body: UpdateWebhookRequest, response: { 200: WebhookView, 400: badRequest, 404: notFound } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const body = request.body;
        await read(principal.tenantId, request.params.id);
        if (body.url !== undefined) await checkTarget(body.url);
        const result = await ctx.commands.execute(
          webhooks,
          request.params.id,
          { type: 'UpdateWebhook', url: body.url, events: body.events, secretSealed: body.secret === undefined ? undefined : box.seal(body.secret), enabled: body.enabled, apiVersion: body.api_version, by: principal.userId },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        return webhookView(await read(principal.tenantId, request.params.id));
      },
    );

    app.delete(
      '/v1/admin/webhooks/:id',
      { preHandler: admin, schema: { tags, summary: 'Delete a webhook (and its deliveries)', params: WebhookParams, response: { 200: z.object({ id: z.string(), object: z.literal('webhook'), deleted: z.literal(true) }), 404: notFound } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const result = await ctx.commands.execute(webhooks, request.params.id, { type: 'DeleteWebhook', by: principal.userId }, { tenantId: principal.tenantId, causationId: request.id });
        await settle(result.position);
        return { id: request.params.id, object: 'webhook' as const, deleted: true as const };
      },
    );

    app.post(
      '/v1/admin/webhooks/:id/test',
      {
        preHandler: admin,
        schema: {
          tags,
          summary: 'Send a webhook.test delivery to this webhook',
          description: 'Payload type `webhook.test`, data `{webhook_id, requested_by}`, signed and retried like any delivery (sent while the webhook is enabled).',
          params: WebhookParams,
          response: { 202: DeliveryView, 404: notFound },
        },
      },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const { id } = request.params;
        const testId = randomBytes(12).toString('hex');
        const result = await ctx.commands.execute(webhooks, id, { type: 'RequestTest', testId, by: principal.userId }, { tenantId: principal.tenantId, causationId: request.id });
        await settle(result.position);
        const row = await findDelivery(db, principal.tenantId, id, deliveryIdOf(id, testNoticeKey(testId)));
        if (!row) throw webhookNotFound(); // deleted meanwhile
        return reply.code(202).send(deliveryView(row));
      },
    );

    app.get(
      '/v1/admin/webhooks/:id/deliveries',
      { preHandler: admin, schema: { tags, summary: "A webhook's deliveries, newest first", params: WebhookParams, querystring: DeliveryQuery, response: { 200: DeliveryList, 404: notFound } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        await read(principal.tenantId, request.params.id);
        const page = await listDeliveries(db, principal.tenantId, request.params.id, request.query);
        return { object: 'list' as const, data: page.rows.map(deliveryView), has_more: page.hasMore, next_cursor: page.hasMore ? page.rows.at(-1)!.id : null };
      },
    );

    app.post(
      '/v1/admin/webhooks/:id/deliveries/:delivery_id/redeliver',
      { preHandler: admin, schema: { tags, summary: 'Queue one more attempt of a delivery, now', description: 'Whatever its status; a failed delivery gets a new retry window.', params: DeliveryParams, response: { 202: DeliveryView, 404: notFound } } },
      async (request, reply) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const { id, delivery_id: deliveryId } = request.params;
        await read(principal.tenantId, id);
        if (!(await findDelivery(db, principal.tenantId, id, deliveryId))) throw new NotFoundError('delivery not found', 'delivery_not_found');
        const result = await ctx.commands.execute(webhooks, id, { type: 'RequestRedelivery', deliveryId, by: principal.userId }, { tenantId: principal.tenantId, causationId: request.id });
        await settle(result.position);
        const row = await findDelivery(db, principal.tenantId, id, deliveryId);
        if (!row) throw new NotFoundError('delivery not found', 'delivery_not_found');
        return reply.code(202).send(deliveryView(row));
      },
    );
  };
}

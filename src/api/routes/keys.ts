/**
 * API keys: `/api/admin/keys` for admins (any user of their tenant), `/v1/keys` for users managing
 * their own. The secret is returned once, at creation, and stored only as a SHA-256.
 *
 * The creation shape takes the key's `permissions` and the policy objects attached to it
 * (`model_restrictions`, `rate_limits`, `ip_restrictions`); they are merged into one policy:
 * permissions.models and model_restrictions.allowed_models are kept apart and both narrow (a
 * model must pass each list that is given), permissions.ip_whitelist and
 * ip_restrictions.allowed_ips are united, and top-level `rate_limits` fields win over
 * `permissions.rate_limits`.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { preHandlerAsyncHookHandler } from 'fastify';
import type { ApiKeysTable } from '../../adapters/sql/schema.js';
import { apiKeys } from '../../commands/keys/decider.js';
import { unrestrictedPolicy, type KeyPolicy } from '../../commands/keys/events.js';
import { parseDuration } from '../../config.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { loadKeyRows, loadKeyUsage } from '../../queries/keys.js';
import { MICRO_PER_CREDIT, parseCredits } from '../../billing/money.js';
import { hashKey, KEY_PREFIX } from '../../relay/access/key-gate.js';
import { requirePermission, requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';
import { CreditsInput } from './billing-views.js';
import { callerTenantOnly } from './tenants.js';

const positive = z.number().int().positive().nullable().optional();

const BURST_DURATION_FIELD = 'rate_limits.burst_allowance.duration';
/** The spec writes durations as strings; a number is seconds, as it always was. */
const BurstDuration = z
  .union([z.number().int().positive(), z.string().regex(/^(?:\d+(?:ms|s|m|h))+$/, 'a number of seconds or a duration such as "30s", "2m", "1h" or "1m30s"')])
  .describe('seconds (a number), or a duration: integers with ms, s, m or h, combined as in "1m30s"; a whole number of seconds, stored as seconds');

/** A burst duration as given, in whole seconds (what the policy stores and the key gate reads). */
export function burstDurationSeconds(duration: number | string): number {
  if (typeof duration === 'number') return duration;
  const ms = parseDuration(duration);
  if (ms <= 0 || ms % 1000 !== 0) {
    throw new BadRequestError(`invalid body field "${BURST_DURATION_FIELD}": "${duration}" is not a positive whole number of seconds`, 'invalid_request', BURST_DURATION_FIELD);
  }
  return ms / 1000;
}
const Country = z.string().regex(/^[A-Za-z]{2}$/, 'ISO 3166-1 alpha-2 country code');

export const KeyPolicyInput = z.object({
  permissions: z
    .object({
      models: z.array(z.string().min(1)).optional().describe('models the key may use; empty = all. With model_restrictions.allowed_models, a model must be in both'),
      quota_limit: CreditsInput.nullable().optional().describe('credits: a decimal string ("12.5") or a number, at most 6 decimals, not negative; null = unlimited'),
      rate_limits: z.object({ requests_per_minute: positive, tokens_per_hour: positive }).optional(),
      ip_whitelist: z.array(z.string().min(1)).optional(),
      expiry_date: z.iso.datetime({ offset: true }).or(z.iso.date()).nullable().optional(),
    })
    .optional(),
  model_restrictions: z
    .object({
      allowed_models: z.array(z.string().min(1)).optional().describe('models the key may use; empty = all. With permissions.models, a model must be in both'),
      blocked_models: z.array(z.string().min(1)).optional().describe('models the key may never use, whatever the allow lists say'),
      model_aliases: z.record(z.string().min(1), z.string().min(1)).optional(),
    })
    .optional(),
  rate_limits: z
    .object({
      requests_per_minute: positive,
      requests_per_hour: positive,
      tokens_per_hour: positive,
      concurrent_requests: positive,
      burst_allowance: z.object({ multiplier: z.number().min(1).max(100), duration: BurstDuration }).nullable().optional(),
    })
    .optional(),
  ip_restrictions: z
    .object({
      allowed_ips: z.array(z.string().min(1)).optional(),
      blocked_ips: z.array(z.string().min(1)).optional(),
      geographic_restrictions: z.object({ allowed_countries: z.array(Country).optional(), blocked_countries: z.array(Country).optional() }).optional(),
    })
    .optional(),
});
type KeyPolicyInput = z.infer<typeof KeyPolicyInput>;

export const CreateKeyRequest = KeyPolicyInput.extend({ name: z.string().min(1).max(200), user_id: z.string().min(1).max(64) }).meta({ id: 'CreateTenantApiKeyRequest' });
export const CreateOwnKeyRequest = KeyPolicyInput.extend({ name: z.string().min(1).max(200) }).meta({ id: 'CreateApiKeyRequest' });
export const UpdateKeyRequest = KeyPolicyInput.extend({ name: z.string().min(1).max(200).optional() }).meta({ id: 'UpdateApiKeyRequest' });

const EMPTY_POLICY: KeyPolicy = unrestrictedPolicy();

const union = (...lists: Array<string[] | undefined>) => [...new Set(lists.flatMap((l) => l ?? []))];
const pick = <T>(...values: Array<T | undefined>): T | undefined => values.find((v) => v !== undefined);

/** A quota_limit as given (decimal string or number) in credits, exact to the micro-credit; 400 when negative or finer. */
function quotaCredits(value: string | number): number {
  const micro = parseCredits(value, 'quota_limit');
  if (micro < 0) throw new BadRequestError('quota_limit must not be negative', 'invalid_amount', 'quota_limit');
  return micro / MICRO_PER_CREDIT;
}

/** Applies an input onto a policy: what the input names replaces, what it leaves out stays. */
export function policyFrom(input: KeyPolicyInput, base: KeyPolicy = EMPTY_POLICY): KeyPolicy {
  const p = input.permissions;
  const m = input.model_restrictions;
  const r = input.rate_limits;
  const ip = input.ip_restrictions;
  const geo = ip?.geographic_restrictions;
  const expiry = p?.expiry_date;
  return {
    allowed_models: m?.allowed_models ?? base.allowed_models,
    permitted_models: p?.models ?? base.permitted_models,
    blocked_models: m?.blocked_models ?? base.blocked_models,
    model_aliases: m?.model_aliases ?? base.model_aliases,
    quota_limit: p?.quota_limit === undefined ? base.quota_limit : p.quota_limit === null ? null : quotaCredits(p.quota_limit),
    rate_limits: {
      requests_per_minute: pick(r?.requests_per_minute, p?.rate_limits?.requests_per_minute) ?? (r?.requests_per_minute === null ? null : base.rate_limits.requests_per_minute),
      requests_per_hour: r?.requests_per_hour !== undefined ? r.requests_per_hour : base.rate_limits.requests_per_hour,
      tokens_per_hour: pick(r?.tokens_per_hour, p?.rate_limits?.tokens_per_hour) ?? (r?.tokens_per_hour === null ? null : base.rate_limits.tokens_per_hour),
      concurrent_requests: r?.concurrent_requests !== undefined ? r.concurrent_requests : base.rate_limits.concurrent_requests,
      burst_allowance:
        r?.burst_allowance === undefined ? base.rate_limits.burst_allowance : r.burst_allowance === null ? null : { multiplier: r.burst_allowance.multiplier, duration: burstDurationSeconds(r.burst_allowance.duration) },
    },
    allowed_ips: p?.ip_whitelist !== undefined || ip?.allowed_ips !== undefined ? union(p?.ip_whitelist, ip?.allowed_ips) : base.allowed_ips,
    blocked_ips: ip?.blocked_ips ?? base.blocked_ips,
    allowed_countries: geo?.allowed_countries?.map((c) => c.toUpperCase()) ?? base.allowed_countries,
    blocked_countries: geo?.blocked_countries?.map((c) => c.toUpperCase()) ?? base.blocked_countries,
    expires_at: expiry === undefined ? base.expires_at : expiry === null ? null : new Date(expiry).toISOString(),
  };
}

export const KeyView = z.object({
  id: z.string(),
  object: z.literal('api_key'),
  name: z.string(),
  user_id: z.string(),
  tenant_id: z.string(),
  key_prefix: z.string().describe('the first characters of the secret, to recognise it'),
  permissions: z.object({
    models: z.array(z.string()),
    quota_limit: z.number().nullable(),
    rate_limits: z.object({ requests_per_minute: z.number().nullable(), tokens_per_hour: z.number().nullable() }),
    ip_whitelist: z.array(z.string()),
    expiry_date: z.string().nullable(),
  }),
  model_restrictions: z.object({ allowed_models: z.array(z.string()), blocked_models: z.array(z.string()), model_aliases: z.record(z.string(), z.string()) }),
  rate_limits: z.object({
    requests_per_minute: z.number().nullable(),
    requests_per_hour: z.number().nullable(),
    tokens_per_hour: z.number().nullable(),
    concurrent_requests: z.number().nullable(),
    burst_allowance: z.object({ multiplier: z.number(), duration: z.number().describe('seconds') }).nullable(),
  }),
  ip_restrictions: z.object({
    allowed_ips: z.array(z.string()),
    blocked_ips: z.array(z.string()),
    geographic_restrictions: z.object({ allowed_countries: z.array(z.string()), blocked_countries: z.array(z.string()) }),
  }),
  revoked: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  revoked_at: z.string().nullable(),
}).meta({ id: 'ApiKey' });
export const CreatedKeyView = KeyView.extend({ key: z.string().describe('the secret: shown once, never again') }).meta({ id: 'CreatedApiKey' });
/** The list's rows carry what the keys page shows beside the policy. */
export const ListedKeyView = KeyView.extend({
  usage: z.object({
    quota_used: z.number().describe('credits the key has spent at the tenant\'s prices (what its quota_limit counts; the billing projection, a moment behind)'),
    last_used_at: z.string().nullable().describe('start of its latest relay request; null if never used'),
  }),
}).meta({ id: 'ApiKeyListItem' });

export function keyView(row: ApiKeysTable): z.infer<typeof KeyView> {
  const p = JSON.parse(row.policy) as KeyPolicy;
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    user_id: row.user_id,
    tenant_id: row.tenant_id,
    key_prefix: row.key_prefix,
    permissions: {
      // Keys from before permitted_models held one united list, shown in both places as before.
      models: p.permitted_models ?? p.allowed_models,
      quota_limit: p.quota_limit,
      rate_limits: { requests_per_minute: p.rate_limits.requests_per_minute, tokens_per_hour: p.rate_limits.tokens_per_hour },
      ip_whitelist: p.allowed_ips,
      expiry_date: p.expires_at,
    },
    model_restrictions: { allowed_models: p.allowed_models, blocked_models: p.blocked_models, model_aliases: p.model_aliases },
    rate_limits: p.rate_limits,
    ip_restrictions: { allowed_ips: p.allowed_ips, blocked_ips: p.blocked_ips, geographic_restrictions: { allowed_countries: p.allowed_countries, blocked_countries: p.blocked_countries } },
    revoked: row.revoked === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
    revoked_at: row.revoked_at,
  };
}

const KeyId = z.object({ key_id: z.string().min(1).max(64) });

const ApiKeyList = z.object({ object: z.literal('list'), data: z.array(ListedKeyView) }).meta({ id: 'ApiKeyList' });

export function keyRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.addHook('preValidation', callerTenantOnly(ctx.tokens));
    const settle = async (position: number | null) => {
      if (position === null) return;
      await Promise.all([ctx.runner.waitFor(position, { projections: ['api_keys'] }), ctx.views.keys.waitFor(position)]);
    };
    const find = async (tenantId: string, id: string, ownerId?: string) => {
      const row = await ctx.sql.db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
      if (!row || (ownerId !== undefined && row.user_id !== ownerId)) throw new NotFoundError('API key not found', 'key_not_found');
      return row;
    };

    /** One set of handlers, mounted twice: admins (any user of the tenant) and users (their own). */
    const mount = (base: string, guard: preHandlerAsyncHookHandler, own: boolean) => {
      const tags = [own ? 'keys' : 'admin'];
      app.post(
        base,
        { preHandler: guard, schema: { tags, summary: own ? 'Create one of my API keys' : 'Create an API key for a user', body: own ? CreateOwnKeyRequest : CreateKeyRequest, response: { 201: CreatedKeyView } } },
        async (request, reply) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const body = request.body as z.infer<typeof CreateKeyRequest>;
          const userId = own ? principal.userId : body.user_id;
          // A key belongs to a user of the caller's tenant (another tenant's user looks missing).
          if (!own && !(await ctx.queries.user(principal.tenantId, userId))) throw new NotFoundError(`user ${userId} not found`, 'user_not_found');
          const id = `key_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
          const secret = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
          const result = await ctx.commands.execute(
            apiKeys,
            id,
            { type: 'CreateApiKey', keyId: id, name: body.name, userId, keyHash: hashKey(secret), keyPrefix: secret.slice(0, 8), policy: policyFrom(body) },
            { tenantId: principal.tenantId, causationId: request.id },
          );
          await settle(result.position);
          return reply.code(201).send({ ...keyView(await find(principal.tenantId, id)), key: secret });
        },
      );

      app.get(base, { preHandler: guard, schema: { tags, summary: own ? 'My API keys' : 'API keys of the tenant', response: { 200: ApiKeyList } } }, async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const rows = await loadKeyRows(ctx.sql.db, principal.tenantId, own ? principal.userId : undefined);
        const usage = await loadKeyUsage(ctx.sql.db, principal.tenantId, rows.map((r) => r.id));
        return { object: 'list' as const, data: rows.map((row) => ({ ...keyView(row), usage: usage.get(row.id)! })) };
      });

      app.get(`${base}/:key_id`, { preHandler: guard, schema: { tags, summary: 'An API key', params: KeyId, response: { 200: KeyView } } }, async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        return keyView(await find(principal.tenantId, request.params.key_id, own ? principal.userId : undefined));
      });

      app.patch(`${base}/:key_id`, { preHandler: guard, schema: { tags, summary: 'Change an API key', params: KeyId, body: UpdateKeyRequest, response: { 200: KeyView } } }, async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const ownerId = own ? principal.userId : undefined;
        const row = await find(principal.tenantId, request.params.key_id, ownerId);
        const result = await ctx.commands.execute(
          apiKeys,
          row.id,
          { type: 'UpdateApiKey', name: request.body.name, policy: policyFrom(request.body, JSON.parse(row.policy) as KeyPolicy), ownerId },
          { tenantId: principal.tenantId, causationId: request.id },
        );
        await settle(result.position);
        return keyView(await find(principal.tenantId, row.id));
      });

      app.delete(
        `${base}/:key_id`,
        { preHandler: guard, schema: { tags, summary: 'Revoke an API key (on every instance within a second)', params: KeyId, response: { 200: z.object({ id: z.string(), object: z.literal('api_key'), revoked: z.literal(true) }) } } },
        async (request) => {
          const principal = await requirePrincipal(request, ctx.tokens);
          const result = await ctx.commands.execute(
            apiKeys,
            request.params.key_id,
            { type: 'RevokeApiKey', by: principal.userId, ownerId: own ? principal.userId : undefined },
            { tenantId: principal.tenantId, causationId: request.id },
          );
          await settle(result.position);
          return { id: request.params.key_id, object: 'api_key' as const, revoked: true as const };
        },
      );
    };

    mount('/api/admin/keys', requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled), false);
    mount('/v1/keys', requirePermission(ctx, 'keys:manage_own'), true);
  };
}

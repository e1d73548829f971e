/**
 * Admin API of channels. Commands append events; reads come from the `channels` read model
 * (after waiting for the projection, so a client reads its own write). Keys are sealed before
 * they reach the decider and are only ever shown masked.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ChannelsTable } from '../../adapters/sql/schema.js';
import { channels } from '../../commands/channels/decider.js';
import type { ChannelRateLimits, ChannelRetryConfig, ChannelSettings } from '../../commands/channels/events.js';
import { maskSecret } from '../../crypto/secret-box.js';
import { createChannel, deleteChannel, updateChannel } from '../../commands/channels/names.js';
import { NotFoundError } from '../../errors.js';
import { ChannelType } from '../../relay/channel.js';
import { probeChannel } from '../../relay/probe.js';
import { defaultBaseUrl } from '../../relay/providers/index.js';
import { requirePrincipal, requireRole } from '../auth.js';
import type { AppContext } from '../context.js';

const ChannelId = z.object({ channel_id: z.string().min(1).max(64) });

/** Field names are a contract: an unknown one is a 400 `unknown_field` (never dropped silently). */
const RateLimitsInput = z
  .strictObject({
    requests_per_minute: z.number().int().min(1).max(10_000_000).nullable().optional().describe('requests sent to the channel per minute, across every instance'),
    tokens_per_minute: z.number().int().min(1).max(1_000_000_000).nullable().optional().describe('tokens (real usage, counted after each request) per minute'),
  })
  .describe('over a limit the channel is skipped like a cooled-down one; none left: 429 channel_rate_limited with Retry-After');
const RetryConfigInput = z
  .strictObject({
    max_retries: z.number().int().min(0).max(10).optional().describe('attempts after one that failed on this channel (default RELAY_MAX_RETRIES)'),
    backoff_multiplier: z.number().min(1).max(10).optional().describe('backoff growth after a failure on this channel (default RELAY_BACKOFF_MULTIPLIER)'),
  })
  .describe("overrides the global retry defaults for attempts that failed on this channel");

export const CreateChannelRequest = z.strictObject({
  name: z.string().min(1).max(100),
  type: ChannelType,
  base_url: z.url({ protocol: /^https?$/ }).nullable().optional(),
  key: z.string().max(4096).default(''),
  models: z.array(z.string().min(1).max(200)).min(1).max(1000),
  model_mapping: z.record(z.string().min(1), z.string().min(1)).default({}),
  priority: z.number().int().min(-1000).max(1000).default(0),
  weight: z.number().int().min(1).max(1000).default(1),
  enabled: z.boolean().default(true),
  config: z.record(z.string(), z.unknown()).default({}),
  rate_limits: RateLimitsInput.nullable().optional(),
  retry_config: RetryConfigInput.nullable().optional(),
  fallback_for: z
    .array(z.string().min(1).max(100))
    .max(50)
    .optional()
    .describe("names or types of channels this one backs up: it is tried after them for their models (the model sent: its own model_mapping, else the name if it lists it, else its first model)"),
}).meta({ id: 'CreateChannelRequest' });

export const UpdateChannelRequest = CreateChannelRequest.partial().extend({ key: z.string().max(4096).optional() }).meta({ id: 'UpdateChannelRequest' });

export const ChannelView = z.object({
  id: z.string(),
  object: z.literal('channel'),
  name: z.string(),
  type: ChannelType,
  base_url: z.string().nullable().describe('as configured (null: the kind default)'),
  effective_base_url: z.string().nullable(),
  key: z.string().describe('masked'),
  models: z.array(z.string()),
  model_mapping: z.record(z.string(), z.string()),
  priority: z.number(),
  weight: z.number(),
  enabled: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  rate_limits: z.object({ requests_per_minute: z.number().nullable(), tokens_per_minute: z.number().nullable() }).nullable(),
  retry_config: z.object({ max_retries: z.number().nullable(), backoff_multiplier: z.number().nullable() }).nullable().describe('null fields: the global default'),
  fallback_for: z.array(z.string()),
  health: z.object({ healthy: z.boolean(), cooldown_until: z.string().nullable(), reason: z.string().nullable() }),
  status: z.enum(['ok', 'broken']).describe('broken: its key does not open with this SECRET; the relay skips it until the key is set again or re-sealed'),
  status_reason: z.string().nullable().describe('why it is broken (null when ok)'),
  last_test: z.object({ ok: z.boolean(), status: z.number().nullable(), latency_ms: z.number().nullable(), error: z.string().nullable(), tested_at: z.string() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).meta({ id: 'Channel' });
export type ChannelView = z.infer<typeof ChannelView>;

export const ChannelTestResponse = z.object({ ok: z.boolean(), status: z.number().nullable(), latency_ms: z.number(), error: z.string().nullable(), channel: ChannelView }).meta({ id: 'ChannelTestResult' });

function rateLimitsView(text: string | null): ChannelView['rate_limits'] {
  if (text === null) return null;
  const limits = JSON.parse(text) as ChannelRateLimits;
  return { requests_per_minute: limits.requests_per_minute ?? null, tokens_per_minute: limits.tokens_per_minute ?? null };
}

function retryConfigView(text: string | null): ChannelView['retry_config'] {
  if (text === null) return null;
  const config = JSON.parse(text) as ChannelRetryConfig;
  return { max_retries: config.max_retries ?? null, backoff_multiplier: config.backoff_multiplier ?? null };
}

/** `broken`: why this instance's channel directory could not open its key (absent: it did). */
export function channelView(row: ChannelsTable, broken?: string): ChannelView {
  const type = row.type as ChannelType;
  const config = JSON.parse(row.config) as Record<string, unknown>;
  return {
    id: row.id,
    object: 'channel',
    name: row.name,
    type,
    base_url: row.base_url,
    effective_base_url: row.base_url ?? defaultBaseUrl(type, config),
    key: row.key_masked,
    models: JSON.parse(row.models) as string[],
    model_mapping: JSON.parse(row.model_mapping) as Record<string, string>,
    priority: row.priority,
    weight: row.weight,
    enabled: row.enabled === 1,
    config,
    rate_limits: rateLimitsView(row.rate_limits),
    retry_config: retryConfigView(row.retry_config),
    fallback_for: row.fallback_for === null ? [] : (JSON.parse(row.fallback_for) as string[]),
    health: { healthy: row.healthy === 1, cooldown_until: row.cooldown_until, reason: row.health_reason },
    status: broken === undefined ? 'ok' : 'broken',
    status_reason: broken ?? null,
    last_test:
      row.last_tested_at === null
        ? null
        : { ok: row.last_test_ok === 1, status: row.last_test_status, latency_ms: row.last_test_latency_ms, error: row.last_test_error, tested_at: row.last_tested_at },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const ChannelList = z.object({ object: z.literal('list'), data: z.array(ChannelView) }).meta({ id: 'ChannelList' });

export function channelRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = requireRole(ctx.tokens, 'admin', ctx.config.auth.rbacEnabled);
    const tags = ['channels'];

    const read = async (tenantId: string, id: string): Promise<ChannelView> => {
      const row = await ctx.queries.channel(tenantId, id);
      if (!row) throw new NotFoundError('channel not found', 'channel_not_found');
      return channelView(row, ctx.views.channels.state.get(row.id)?.broken);
    };
    /** Read-your-writes: the projection and this instance's directory have the commit. */
    const settle = async (position: number | null) => {
      if (position === null) return;
      await Promise.all([ctx.runner.waitFor(position, { projections: ['channels'] }), ctx.views.channels.waitFor(position)]);
    };
    const seal = (key: string) => ({ sealed: ctx.secrets.seal(key), masked: key ? maskSecret(key) : '' });
    const existing = (tenantId: string) => async () => ctx.queries.channels(tenantId);

    app.post('/v1/admin/channels', { preHandler: admin, schema: { tags, summary: 'Create a channel', body: CreateChannelRequest, response: { 201: ChannelView } } }, async (request, reply) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      const { key, ...rest } = request.body;
      const settings: ChannelSettings = { ...rest, base_url: rest.base_url ?? null };
      const id = `ch_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
      const result = await createChannel(ctx.commands, { type: 'CreateChannel', channelId: id, settings, key: seal(key) }, { tenantId: principal.tenantId, causationId: request.id }, existing(principal.tenantId));
      await settle(result.position);
      return reply.code(201).send(await read(principal.tenantId, id));
    });

    app.get('/v1/admin/channels', { preHandler: admin, schema: { tags, summary: 'List channels', response: { 200: ChannelList } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return { object: 'list' as const, data: (await ctx.queries.channels(principal.tenantId)).map((row) => channelView(row, ctx.views.channels.state.get(row.id)?.broken)) };
    });

    app.get('/v1/admin/channels/:channel_id', { preHandler: admin, schema: { tags, summary: 'Get a channel', params: ChannelId, response: { 200: ChannelView } } }, async (request) => {
      const principal = await requirePrincipal(request, ctx.tokens);
      return read(principal.tenantId, request.params.channel_id);
    });

    app.patch(
      '/v1/admin/channels/:channel_id',
      { preHandler: admin, schema: { tags, summary: 'Change a channel', params: ChannelId, body: UpdateChannelRequest, response: { 200: ChannelView } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const { key, ...changes } = request.body;
        const current = await ctx.queries.channel(principal.tenantId, request.params.channel_id);
        const result = await updateChannel(
          ctx.commands,
          request.params.channel_id,
          { type: 'UpdateChannel', changes: changes as Partial<ChannelSettings>, key: key === undefined ? undefined : seal(key) },
          { tenantId: principal.tenantId, causationId: request.id },
          current?.name ?? null,
          existing(principal.tenantId),
        );
        await settle(result.position);
        return read(principal.tenantId, request.params.channel_id);
      },
    );

    app.delete(
      '/v1/admin/channels/:channel_id',
      { preHandler: admin, schema: { tags, summary: 'Delete a channel', params: ChannelId, response: { 200: z.object({ id: z.string(), object: z.literal('channel'), deleted: z.literal(true) }) } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const current = await ctx.queries.channel(principal.tenantId, request.params.channel_id);
        const result = await deleteChannel(ctx.commands, request.params.channel_id, { tenantId: principal.tenantId, causationId: request.id }, current?.name ?? null);
        await settle(result.position);
        return { id: request.params.channel_id, object: 'channel' as const, deleted: true as const };
      },
    );

    app.post(
      '/v1/admin/channels/:channel_id/test',
      { preHandler: admin, schema: { tags, summary: 'Send one real probe request through the channel and record its health', params: ChannelId, response: { 200: ChannelTestResponse } } },
      async (request) => {
        const principal = await requirePrincipal(request, ctx.tokens);
        const id = request.params.channel_id;
        await read(principal.tenantId, id); // 404 for unknown / foreign ids
        const entry = ctx.views.channels.state.get(id);
        if (!entry) throw new NotFoundError('channel not found', 'channel_not_found');
        const result = await probeChannel(entry.channel, ctx.pools, undefined, ctx.logger);
        const context = { tenantId: principal.tenantId, causationId: request.id };
        const tested = await ctx.commands.execute(channels, id, { type: 'RecordChannelTest', ok: result.ok, status: result.status, latencyMs: result.latencyMs, error: result.error }, context);
        const cooldownUntil = result.ok ? null : Date.now() + ctx.config.relay.cooldownMs;
        await ctx.health.setHealth(entry.channel, result.ok, cooldownUntil, result.ok ? 'channel test succeeded' : `channel test failed: ${result.error ?? result.status}`, request.id);
        await settle(Math.max(tested.position ?? 0, await ctx.store.headPosition()));
        return { ok: result.ok, status: result.status, latency_ms: result.latencyMs, error: result.error, channel: await read(principal.tenantId, id) };
      },
    );
  };
}

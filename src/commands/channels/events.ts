/**
 * Events of the channel aggregate. Provider keys appear only sealed (AES-256-GCM, see
 * src/crypto/secret-box.ts) and masked: never in the clear.
 */
import { z } from 'zod';
import { ChannelType } from '../../relay/channel.js';

/**
 * What the relay may send to the channel per minute, across every instance. Requests are
 * counted as they are sent; tokens are counted after each request (its real usage) and checked
 * before the next one.
 */
export const ChannelRateLimits = z.object({
  requests_per_minute: z.number().int().min(1).nullable().optional(),
  tokens_per_minute: z.number().int().min(1).nullable().optional(),
});
export type ChannelRateLimits = z.infer<typeof ChannelRateLimits>;

/** Overrides RELAY_MAX_RETRIES / RELAY_BACKOFF_MULTIPLIER after an attempt that failed on this channel. */
export const ChannelRetryConfig = z.object({
  max_retries: z.number().int().min(0).max(10).optional(),
  backoff_multiplier: z.number().min(1).max(10).optional(),
});
export type ChannelRetryConfig = z.infer<typeof ChannelRetryConfig>;

/** The settings an admin controls, as stored. The relay settings are optional: events before them have none. */
export const ChannelSettings = z.object({
  name: z.string().min(1).max(100),
  type: ChannelType,
  base_url: z.string().nullable(),
  models: z.array(z.string().min(1)).min(1),
  model_mapping: z.record(z.string(), z.string()),
  priority: z.number().int(),
  weight: z.number().int().min(1).max(1000),
  enabled: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  rate_limits: ChannelRateLimits.nullable().optional(),
  retry_config: ChannelRetryConfig.nullable().optional(),
  /** Names or types of channels this one backs up (README "Fallback channels"). */
  fallback_for: z.array(z.string().min(1).max(100)).max(50).optional(),
});
export type ChannelSettings = z.infer<typeof ChannelSettings>;

const SealedKey = z.object({ key_sealed: z.string(), key_masked: z.string() });

export const ChannelCreated = z.object({
  type: z.literal('ChannelCreated'),
  data: ChannelSettings.extend(SealedKey.shape).extend({ channel_id: z.string() }),
});

export const ChannelUpdated = z.object({
  type: z.literal('ChannelUpdated'),
  data: z.object({ changes: ChannelSettings.partial().extend(SealedKey.partial().shape) }),
});

export const ChannelDeleted = z.object({ type: z.literal('ChannelDeleted'), data: z.object({}) });

/** Health as every instance must see it: usable or not, and until when it cools down. */
export const ChannelHealthChanged = z.object({
  type: z.literal('ChannelHealthChanged'),
  data: z.object({
    healthy: z.boolean(),
    /** ISO time before which the router skips the channel (rate limited, or failing). */
    cooldown_until: z.string().nullable(),
    reason: z.string(),
  }),
});

export const ChannelTested = z.object({
  type: z.literal('ChannelTested'),
  data: z.object({ ok: z.boolean(), status: z.number().int().nullable(), latency_ms: z.number(), error: z.string().nullable() }),
});

export const ChannelEvent = z.discriminatedUnion('type', [ChannelCreated, ChannelUpdated, ChannelDeleted, ChannelHealthChanged, ChannelTested]);
export type ChannelEvent = z.infer<typeof ChannelEvent>;
export const CHANNEL_EVENT_TYPES = ['ChannelCreated', 'ChannelUpdated', 'ChannelDeleted', 'ChannelHealthChanged', 'ChannelTested'] as const;

/** Reservation of a channel name within a tenant, one stream per tenant and name (`channelname-<sha256>`). */
export const ChannelNameReserved = z.object({
  type: z.literal('ChannelNameReserved'),
  data: z.object({ channel_id: z.string(), name: z.string() }),
});
export const ChannelNameReleased = z.object({ type: z.literal('ChannelNameReleased'), data: z.object({ channel_id: z.string() }) });
export const ChannelNameEvent = z.discriminatedUnion('type', [ChannelNameReserved, ChannelNameReleased]);
export type ChannelNameEvent = z.infer<typeof ChannelNameEvent>;

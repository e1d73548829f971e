/**
 * Events of the API key aggregate. The secret itself never appears: only its SHA-256 (keys are
 * 256-bit random, so a fast hash is safe) and a short prefix for people to recognise it.
 */
import { z } from 'zod';

/** The one canonical policy a key carries (the creation shape's several objects, merged). */
export const KeyPolicy = z.object({
  /**
   * `model_restrictions.allowed_models`: models the key may use; empty = all. Checked after
   * aliases resolve, together with `permitted_models`: a model must pass both. (Keys created
   * before `permitted_models` existed hold the union of both lists here, as they were enforced.)
   */
  allowed_models: z.array(z.string().min(1)),
  /** `permissions.models`: models the key's permissions allow; empty or absent = all. */
  permitted_models: z.array(z.string().min(1)).optional(),
  /** Models the key may never use (wins over both allow lists). */
  blocked_models: z.array(z.string().min(1)),
  /** alias -> model, resolved before the allow/block check. */
  model_aliases: z.record(z.string(), z.string()),
  /** Credits; null = unlimited. */
  quota_limit: z.number().min(0).nullable(),
  rate_limits: z.object({
    requests_per_minute: z.number().int().positive().nullable(),
    requests_per_hour: z.number().int().positive().nullable(),
    tokens_per_hour: z.number().int().positive().nullable(),
    concurrent_requests: z.number().int().positive().nullable(),
    burst_allowance: z.object({ multiplier: z.number().min(1).max(100), duration: z.number().int().positive().describe('seconds') }).nullable(),
  }),
  /** Addresses or CIDR ranges, IPv4 and IPv6; empty = any. */
  allowed_ips: z.array(z.string()),
  /** Wins over allowed_ips. */
  blocked_ips: z.array(z.string()),
  /** ISO 3166-1 alpha-2 codes; empty = any. */
  allowed_countries: z.array(z.string().length(2)),
  blocked_countries: z.array(z.string().length(2)),
  /** ISO time after which the key answers 401 key_expired; null = never. */
  expires_at: z.string().nullable(),
});
export type KeyPolicy = z.infer<typeof KeyPolicy>;

/** A policy that restricts nothing: what a key created without one gets, field by field. */
export function unrestrictedPolicy(): KeyPolicy {
  return {
    allowed_models: [],
    permitted_models: [],
    blocked_models: [],
    model_aliases: {},
    quota_limit: null,
    rate_limits: { requests_per_minute: null, requests_per_hour: null, tokens_per_hour: null, concurrent_requests: null, burst_allowance: null },
    allowed_ips: [],
    blocked_ips: [],
    allowed_countries: [],
    blocked_countries: [],
    expires_at: null,
  };
}

export const ApiKeyCreated = z.object({
  type: z.literal('ApiKeyCreated'),
  data: z.object({ key_id: z.string(), name: z.string(), user_id: z.string(), key_hash: z.string(), key_prefix: z.string(), policy: KeyPolicy }),
});
export const ApiKeyUpdated = z.object({
  type: z.literal('ApiKeyUpdated'),
  data: z.object({ name: z.string().optional(), policy: KeyPolicy.optional() }),
});
export const ApiKeyRevoked = z.object({ type: z.literal('ApiKeyRevoked'), data: z.object({ by: z.string().nullable() }) });

export const ApiKeyEvent = z.discriminatedUnion('type', [ApiKeyCreated, ApiKeyUpdated, ApiKeyRevoked]);
export type ApiKeyEvent = z.infer<typeof ApiKeyEvent>;
export const API_KEY_EVENT_TYPES = ['ApiKeyCreated', 'ApiKeyUpdated', 'ApiKeyRevoked'] as const;

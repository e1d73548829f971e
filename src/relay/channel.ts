/** A channel as the relay uses it: one upstream provider account (key, base URL, models). */
import { z } from 'zod';
import type { ChannelRateLimits, ChannelRetryConfig } from '../commands/channels/events.js';
import { PROVIDER_KIND_NAMES } from './providers/index.js';

/** Every kind a channel can be: the provider registry's keys (src/relay/providers/index.ts). */
export const ChannelType = z.enum(PROVIDER_KIND_NAMES);
export type ChannelType = z.infer<typeof ChannelType>;

export interface Channel {
  id: string;
  tenantId: string;
  name: string;
  type: ChannelType;
  /** Base URL with no trailing slash (the kind's default when the admin gave none). */
  baseUrl: string;
  /** The provider key, decrypted (only ever in memory). For bedrock: "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]". */
  apiKey: string;
  models: string[];
  /** Client-facing alias -> upstream model name. */
  modelMapping: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
  /** Provider specific: api_version, region, deployment, organization, ... */
  config: Record<string, unknown>;
  /** Per-minute limits of what the relay sends it (src/relay/channel-limits.ts); absent or null: none. */
  rateLimits?: ChannelRateLimits | null;
  /** Overrides the global retries and backoff after a failure on this channel; absent or null: the defaults. */
  retryConfig?: ChannelRetryConfig | null;
  /** Names or types of the channels it backs up (src/relay/router.ts); absent or empty: none. */
  fallbackFor?: readonly string[];
}

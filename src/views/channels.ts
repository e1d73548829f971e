/**
 * The channel directory every instance keeps in memory for routing: keys decrypted once, health
 * current, no database round trip per relay request. Seeded from the channels read model
 * (src/projections/channels.ts).
 */
import { ChannelEvent, type ChannelRateLimits, type ChannelRetryConfig } from '../commands/channels/events.js';
import type { ChannelsTable } from '../adapters/sql/schema.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { channelIdOf, channelsProjection } from '../projections/channels.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';
import { loadChannelRows } from '../queries/channels.js';
import type { Channel, ChannelType } from '../relay/channel.js';
import { defaultBaseUrl } from '../relay/providers/index.js';

/** A channel as the router sees it: ready to call, with its shared health. */
export interface RoutableChannel {
  channel: Channel;
  /** The admin's base_url (null: the kind's default applies). */
  baseUrlSetting: string | null;
  healthy: boolean;
  /** Epoch ms before which the router skips it, or 0. */
  cooldownUntil: number;
  /**
   * Why its key does not open (sealed with another SECRET, or damaged), else absent. The router
   * skips a broken channel and admins see it as such; the rest of the directory serves.
   */
  broken?: string;
}

/** channel id -> routable channel, for every tenant. Mutated in place by `evolve` (hot path). */
export type ChannelDirectory = Map<string, RoutableChannel>;

/** The admin's base_url, or the kind's default; without a trailing slash. */
function effectiveBaseUrl(setting: string | null, type: ChannelType, config: Record<string, unknown>): string {
  return (setting ?? defaultBaseUrl(type, config) ?? '').replace(/\/+$/, '');
}

/** A channel's settings as stored: the base URL as the admin gave it, the key sealed. */
type ChannelFields = Omit<Channel, 'baseUrl' | 'apiKey'> & { baseUrl: string | null; keySealed: string };

/** What an admin reads for a key that does not open with this SECRET. */
export const KEY_DOES_NOT_OPEN = 'the key does not open with this SECRET (sealed with another one, or damaged): set the key again, or re-seal it with "switchyard secret rotate"';

/** The key in the clear, or why it is not: one channel that does not open must not stop the rest. */
function openKey(keySealed: string, box: SecretBox): { apiKey: string; broken?: string } {
  try {
    return { apiKey: box.open(keySealed) };
  } catch {
    return { apiKey: '', broken: KEY_DOES_NOT_OPEN };
  }
}

/** A routable channel from its settings: the key is decrypted here, once. */
function buildChannel(f: ChannelFields, box: SecretBox): { channel: Channel; broken?: string } {
  const { keySealed, baseUrl, ...rest } = f;
  const { apiKey, broken } = openKey(keySealed, box);
  return { channel: { ...rest, baseUrl: effectiveBaseUrl(baseUrl, f.type, f.config), apiKey }, ...(broken !== undefined && { broken }) };
}

function toChannel(row: ChannelsTable, box: SecretBox): { channel: Channel; broken?: string } {
  return buildChannel(
    {
      id: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      type: row.type as ChannelType,
      baseUrl: row.base_url,
      keySealed: row.key_sealed,
      models: JSON.parse(row.models) as string[],
      modelMapping: JSON.parse(row.model_mapping) as Record<string, string>,
      priority: row.priority,
      weight: row.weight,
      enabled: row.enabled === 1,
      config: JSON.parse(row.config) as Record<string, unknown>,
      rateLimits: activeRateLimits(row.rate_limits === null ? null : (JSON.parse(row.rate_limits) as ChannelRateLimits)),
      retryConfig: row.retry_config === null ? null : (JSON.parse(row.retry_config) as ChannelRetryConfig),
      fallbackFor: row.fallback_for === null ? [] : (JSON.parse(row.fallback_for) as string[]),
    },
    box,
  );
}

/** Limits with at least one value set, else null: the relay's test for "no counters round trip". */
function activeRateLimits(limits: ChannelRateLimits | null | undefined): ChannelRateLimits | null {
  return limits && (limits.requests_per_minute || limits.tokens_per_minute) ? limits : null;
}

/** The live view behind routing. It folds the same events the projection does, in memory. */
export function channelDirectoryView(box: SecretBox): LiveViewDefinition<ChannelDirectory> {
  return {
    projection: channelsProjection,
    async load(db) {
      const directory: ChannelDirectory = new Map();
      for (const row of await loadChannelRows(db)) {
        directory.set(row.id, { ...toChannel(row, box), baseUrlSetting: row.base_url, healthy: row.healthy === 1, cooldownUntil: row.cooldown_until ? Date.parse(row.cooldown_until) : 0 });
      }
      return directory;
    },
    evolve(directory, stored) {
      const id = channelIdOf(stored.stream);
      const event = ChannelEvent.parse({ type: stored.type, data: stored.data });
      const entry = directory.get(id);
      switch (event.type) {
        case 'ChannelCreated': {
          const d = event.data;
          const built = buildChannel(
            {
              id,
              tenantId: stored.tenant_id,
              name: d.name,
              type: d.type,
              baseUrl: d.base_url,
              keySealed: d.key_sealed,
              models: d.models,
              modelMapping: d.model_mapping,
              priority: d.priority,
              weight: d.weight,
              enabled: d.enabled,
              config: d.config,
              rateLimits: activeRateLimits(d.rate_limits),
              retryConfig: d.retry_config ?? null,
              fallbackFor: d.fallback_for ?? [],
            },
            box,
          );
          directory.set(id, { ...built, baseUrlSetting: d.base_url, healthy: true, cooldownUntil: 0 });
          break;
        }
        case 'ChannelUpdated': {
          if (!entry) break;
          const { key_sealed, key_masked: _masked, base_url, ...rest } = event.data.changes;
          const c = entry.channel;
          const next: Channel = {
            ...c,
            ...(rest.name !== undefined && { name: rest.name }),
            ...(rest.type !== undefined && { type: rest.type }),
            ...(rest.models !== undefined && { models: rest.models }),
            ...(rest.model_mapping !== undefined && { modelMapping: rest.model_mapping }),
            ...(rest.priority !== undefined && { priority: rest.priority }),
            ...(rest.weight !== undefined && { weight: rest.weight }),
            ...(rest.enabled !== undefined && { enabled: rest.enabled }),
            ...(rest.config !== undefined && { config: rest.config }),
            ...(rest.rate_limits !== undefined && { rateLimits: activeRateLimits(rest.rate_limits) }),
            ...(rest.retry_config !== undefined && { retryConfig: rest.retry_config }),
            ...(rest.fallback_for !== undefined && { fallbackFor: rest.fallback_for }),
          };
          if (key_sealed !== undefined) {
            const { apiKey, broken } = openKey(key_sealed, box);
            next.apiKey = apiKey;
            if (broken === undefined) delete entry.broken;
            else entry.broken = broken;
          }
          if (base_url !== undefined) entry.baseUrlSetting = base_url;
          next.baseUrl = effectiveBaseUrl(entry.baseUrlSetting, next.type, next.config);
          entry.channel = next;
          break;
        }
        case 'ChannelDeleted':
          directory.delete(id);
          break;
        case 'ChannelHealthChanged':
          if (entry) {
            entry.healthy = event.data.healthy;
            entry.cooldownUntil = event.data.cooldown_until ? Date.parse(event.data.cooldown_until) : 0;
          }
          break;
        case 'ChannelTested':
          break;
      }
      return directory;
    },
  };
}

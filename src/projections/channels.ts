/**
 * Channels read model (`channels`, one row per live channel) for the admin API; the routing
 * directory in memory is its live view (src/views/channels.ts).
 */
import type { ChannelsTable } from '../adapters/sql/schema.js';
import { CHANNEL_EVENT_TYPES, ChannelEvent } from '../commands/channels/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { Projection } from './runtime/projection.js';

export const channelIdOf = (stream: string) => stream.slice('channel-'.length);

const jsonOrNull = (value: object | null | undefined) => (value ? JSON.stringify(value) : null);

function parse(event: StoredEvent): ChannelEvent {
  return ChannelEvent.parse({ type: event.type, data: event.data });
}

export const channelsProjection: Projection = {
  name: 'channels',
  version: 1,
  eventTypes: CHANNEL_EVENT_TYPES,
  async apply(trx, stored) {
    const id = channelIdOf(stored.stream);
    const event = parse(stored);
    const at = stored.occurred_at;
    switch (event.type) {
      case 'ChannelCreated': {
        const d = event.data;
        await trx
          .insertInto('channels')
          .values({
            id,
            tenant_id: stored.tenant_id,
            name: d.name,
            type: d.type,
            base_url: d.base_url,
            key_sealed: d.key_sealed,
            key_masked: d.key_masked,
            models: JSON.stringify(d.models),
            model_mapping: JSON.stringify(d.model_mapping),
            priority: d.priority,
            weight: d.weight,
            enabled: d.enabled ? 1 : 0,
            config: JSON.stringify(d.config),
            rate_limits: jsonOrNull(d.rate_limits),
            retry_config: jsonOrNull(d.retry_config),
            fallback_for: d.fallback_for && d.fallback_for.length > 0 ? JSON.stringify(d.fallback_for) : null,
            healthy: 1,
            cooldown_until: null,
            health_reason: null,
            last_test_ok: null,
            last_test_status: null,
            last_test_latency_ms: null,
            last_test_error: null,
            last_tested_at: null,
            created_at: at,
            updated_at: at,
          })
          .execute();
        return;
      }
      case 'ChannelUpdated': {
        const c = event.data.changes;
        const set: Partial<ChannelsTable> = { updated_at: at };
        if (c.name !== undefined) set.name = c.name;
        if (c.type !== undefined) set.type = c.type;
        if (c.base_url !== undefined) set.base_url = c.base_url;
        if (c.key_sealed !== undefined) set.key_sealed = c.key_sealed;
        if (c.key_masked !== undefined) set.key_masked = c.key_masked;
        if (c.models !== undefined) set.models = JSON.stringify(c.models);
        if (c.model_mapping !== undefined) set.model_mapping = JSON.stringify(c.model_mapping);
        if (c.priority !== undefined) set.priority = c.priority;
        if (c.weight !== undefined) set.weight = c.weight;
        if (c.enabled !== undefined) set.enabled = c.enabled ? 1 : 0;
        if (c.config !== undefined) set.config = JSON.stringify(c.config);
        if (c.rate_limits !== undefined) set.rate_limits = jsonOrNull(c.rate_limits);
        if (c.retry_config !== undefined) set.retry_config = jsonOrNull(c.retry_config);
        if (c.fallback_for !== undefined) set.fallback_for = c.fallback_for.length > 0 ? JSON.stringify(c.fallback_for) : null;
        await trx.updateTable('channels').set(set).where('id', '=', id).execute();
        return;
      }
      case 'ChannelDeleted':
        await trx.deleteFrom('channels').where('id', '=', id).execute();
        return;
      case 'ChannelHealthChanged':
        await trx
          .updateTable('channels')
          .set({ healthy: event.data.healthy ? 1 : 0, cooldown_until: event.data.cooldown_until, health_reason: event.data.reason, updated_at: at })
          .where('id', '=', id)
          .execute();
        return;
      case 'ChannelTested':
        await trx
          .updateTable('channels')
          .set({ last_test_ok: event.data.ok ? 1 : 0, last_test_status: event.data.status, last_test_latency_ms: Math.round(event.data.latency_ms), last_test_error: event.data.error, last_tested_at: at })
          .where('id', '=', id)
          .execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('channels').execute();
  },
};

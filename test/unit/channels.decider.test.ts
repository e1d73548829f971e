/** Given / when / then over the channel decider and the channel name reservations. */
import { describe, expect, it } from 'vitest';
import { channelNameReservationId, channelNames, channels } from '../../src/commands/channels/decider.js';
import type { ChannelEvent, ChannelNameEvent, ChannelSettings } from '../../src/commands/channels/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const settings: ChannelSettings = {
  name: 'main',
  type: 'openai',
  base_url: null,
  models: ['gpt-4o-mini'],
  model_mapping: {},
  priority: 0,
  weight: 1,
  enabled: true,
  config: {},
};
const key = { sealed: 'v1.a.b.c', masked: 'sk-****abcd' };
const created: ChannelEvent = { type: 'ChannelCreated', data: { channel_id: 'ch_1', ...settings, key_sealed: key.sealed, key_masked: key.masked } };

const spec = DeciderSpec.for(channels);

describe('channel decider', () => {
  it('creates a channel with its sealed key', () => {
    spec.given([]).when({ type: 'CreateChannel', channelId: 'ch_1', settings, key }).then([created]);
  });

  it('refuses a second create, and kinds without a base URL default', () => {
    spec.given([created]).when({ type: 'CreateChannel', channelId: 'ch_1', settings, key }).thenThrows(DomainError);
    spec.given([]).when({ type: 'CreateChannel', channelId: 'x', settings: { ...settings, type: 'custom' }, key }).thenThrows(/needs base_url/);
    spec.given([]).when({ type: 'CreateChannel', channelId: 'x', settings: { ...settings, base_url: 'ftp://x' }, key }).thenThrows(/http or https/);
  });

  it("records the relay settings that change (rate_limits, retry_config, fallback_for); null clears them", () => {
    const limited = { type: 'ChannelUpdated' as const, data: { changes: { rate_limits: { requests_per_minute: 10 }, fallback_for: ['primary'] } } };
    spec.given([created]).when({ type: 'UpdateChannel', changes: { rate_limits: { requests_per_minute: 10 }, fallback_for: ['primary'], priority: 0 } }).then([limited]);
    spec.given([created, limited]).when({ type: 'UpdateChannel', changes: { rate_limits: { requests_per_minute: 10 }, fallback_for: ['primary'] } }).thenNothingHappened();
    spec.given([created, limited]).when({ type: 'UpdateChannel', changes: { rate_limits: null, retry_config: { max_retries: 0 } } }).then([
      { type: 'ChannelUpdated', data: { changes: { rate_limits: null, retry_config: { max_retries: 0 } } } },
    ]);
    const withAll = { ...settings, rate_limits: { tokens_per_minute: 1000 }, retry_config: { backoff_multiplier: 3 }, fallback_for: ['openai'] };
    spec.given([]).when({ type: 'CreateChannel', channelId: 'ch_2', settings: withAll, key }).then([{ type: 'ChannelCreated', data: { channel_id: 'ch_2', ...withAll, key_sealed: key.sealed, key_masked: key.masked } }]);
  });

  it('records only the fields that change', () => {
    spec.given([created]).when({ type: 'UpdateChannel', changes: { priority: 5, name: 'main', weight: undefined } }).then([{ type: 'ChannelUpdated', data: { changes: { priority: 5 } } }]);
    spec.given([created]).when({ type: 'UpdateChannel', changes: { name: 'main' } }).thenNothingHappened();
    spec
      .given([created])
      .when({ type: 'UpdateChannel', changes: {}, key: { sealed: 'v1.n', masked: 'sk-****wxyz' } })
      .then([{ type: 'ChannelUpdated', data: { changes: { key_sealed: 'v1.n', key_masked: 'sk-****wxyz' } } }]);
  });

  it('answers not found for missing or deleted channels', () => {
    spec.given([]).when({ type: 'UpdateChannel', changes: { priority: 1 } }).thenThrows(NotFoundError);
    const deleted: ChannelEvent = { type: 'ChannelDeleted', data: {} };
    spec.given([created, deleted]).when({ type: 'DeleteChannel' }).thenThrows(NotFoundError);
    spec.given([created]).when({ type: 'DeleteChannel' }).then([deleted]);
  });

  it('records health changes only when health changes', () => {
    const down = { type: 'SetChannelHealth', healthy: false, cooldownUntil: '2030-01-01T00:00:00.000Z', reason: '5 failures' } as const;
    const wentDown: ChannelEvent = { type: 'ChannelHealthChanged', data: { healthy: false, cooldown_until: '2030-01-01T00:00:00.000Z', reason: '5 failures' } };
    spec.given([created]).when(down).then([wentDown]);
    spec.given([created, wentDown]).when(down).thenNothingHappened();
    spec
      .given([created, wentDown])
      .when({ type: 'SetChannelHealth', healthy: true, cooldownUntil: null, reason: 'probe ok' })
      .then([{ type: 'ChannelHealthChanged', data: { healthy: true, cooldown_until: null, reason: 'probe ok' } }]);
    spec.given([]).when(down).thenNothingHappened();
  });
});

describe('channel name reservation decider', () => {
  const names = DeciderSpec.for(channelNames);
  const reserved: ChannelNameEvent = { type: 'ChannelNameReserved', data: { channel_id: 'ch_1', name: 'Main' } };

  it('reserves a free name; the same channel again is a no-op; another channel gets channel_name_taken on name', () => {
    names.given([]).when({ type: 'ReserveChannelName', channelId: 'ch_1', name: 'Main' }).then([reserved]);
    names.given([reserved]).when({ type: 'ReserveChannelName', channelId: 'ch_1', name: 'Main' }).thenNothingHappened();
    names.given([reserved]).when({ type: 'ReserveChannelName', channelId: 'ch_2', name: 'main' }).thenThrows(expect.objectContaining({ status: 409, code: 'channel_name_taken', param: 'name' }));
  });

  it('releases only its own reservation, after which the name is free again', () => {
    const released: ChannelNameEvent = { type: 'ChannelNameReleased', data: { channel_id: 'ch_1' } };
    names.given([reserved]).when({ type: 'ReleaseChannelName', channelId: 'ch_2' }).thenNothingHappened();
    names.given([reserved]).when({ type: 'ReleaseChannelName', channelId: 'ch_1' }).then([released]);
    names.given([reserved, released]).when({ type: 'ReserveChannelName', channelId: 'ch_2', name: 'main' }).then([{ type: 'ChannelNameReserved', data: { channel_id: 'ch_2', name: 'main' } }]);
  });

  it('names the stream after the tenant and the name, ignoring case and surrounding space', () => {
    expect(channelNameReservationId('t1', ' OpenAI ')).toBe(channelNameReservationId('t1', 'openai'));
    expect(channelNameReservationId('t1', 'openai')).not.toBe(channelNameReservationId('t2', 'openai'));
    expect(channelNameReservationId('t1', 'openai')).not.toBe(channelNameReservationId('t1', 'openai-2'));
    expect(channelNameReservationId('t1', 'openai')).toMatch(/^[0-9a-f]{64}$/);
  });
});

/** Given / when / then over the channel decider. */
import { describe, expect, it } from 'vitest';
import { channels, type ChannelCommand } from '../../src/commands/channels/decider.js';
import type { ChannelEvent, ChannelSettings } from '../../src/commands/channels/events.js';
import { DomainError, NotFoundError } from '../../src/errors.js';

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

function given(history: ChannelEvent[]) {
  const state = history.reduce(channels.evolve, channels.initialState);
  return { when: (command: ChannelCommand) => channels.decide(command, state) };
}

describe('channel decider', () => {
  it('creates a channel with its sealed key', () => {
    expect(given([]).when({ type: 'CreateChannel', channelId: 'ch_1', settings, key })).toEqual([created]);
  });

  it('refuses a second create, and kinds without a base URL default', () => {
    expect(() => given([created]).when({ type: 'CreateChannel', channelId: 'ch_1', settings, key })).toThrow(DomainError);
    expect(() => given([]).when({ type: 'CreateChannel', channelId: 'x', settings: { ...settings, type: 'custom' }, key })).toThrow(/needs base_url/);
    expect(() => given([]).when({ type: 'CreateChannel', channelId: 'x', settings: { ...settings, base_url: 'ftp://x' }, key })).toThrow(/http or https/);
  });

  it('records only the fields that change', () => {
    expect(given([created]).when({ type: 'UpdateChannel', changes: { priority: 5, name: 'main', weight: undefined } })).toEqual([
      { type: 'ChannelUpdated', data: { changes: { priority: 5 } } },
    ]);
    expect(given([created]).when({ type: 'UpdateChannel', changes: { name: 'main' } })).toEqual([]);
    expect(given([created]).when({ type: 'UpdateChannel', changes: {}, key: { sealed: 'v1.n', masked: 'sk-****wxyz' } })).toEqual([
      { type: 'ChannelUpdated', data: { changes: { key_sealed: 'v1.n', key_masked: 'sk-****wxyz' } } },
    ]);
  });

  it('answers not found for missing or deleted channels', () => {
    expect(() => given([]).when({ type: 'UpdateChannel', changes: { priority: 1 } })).toThrow(NotFoundError);
    const deleted: ChannelEvent = { type: 'ChannelDeleted', data: {} };
    expect(() => given([created, deleted]).when({ type: 'DeleteChannel' })).toThrow(NotFoundError);
    expect(given([created]).when({ type: 'DeleteChannel' })).toEqual([deleted]);
  });

  it('records health changes only when health changes', () => {
    const down = { type: 'SetChannelHealth', healthy: false, cooldownUntil: '2030-01-01T00:00:00.000Z', reason: '5 failures' } as const;
    const [event] = given([created]).when(down);
    expect(event).toEqual({ type: 'ChannelHealthChanged', data: { healthy: false, cooldown_until: '2030-01-01T00:00:00.000Z', reason: '5 failures' } });
    expect(given([created, event!]).when(down)).toEqual([]);
    expect(given([created, event!]).when({ type: 'SetChannelHealth', healthy: true, cooldownUntil: null, reason: 'probe ok' })).toHaveLength(1);
    expect(given([]).when(down)).toEqual([]);
  });
});

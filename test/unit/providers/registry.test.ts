/** The provider registry: the one list of channel kinds, each with its conversion and defaults. */
import { describe, expect, it } from 'vitest';
import { channels } from '../../../src/commands/channels/decider.js';
import type { ChannelSettings } from '../../../src/commands/channels/events.js';
import { ChannelType } from '../../../src/relay/channel.js';
import { defaultBaseUrl, needsBaseUrl, PROVIDER_KIND_NAMES, PROVIDER_KINDS, PROVIDERS } from '../../../src/relay/providers/index.js';

const settingsOf = (type: ChannelType, base_url: string | null): ChannelSettings => ({
  name: 'c',
  type,
  base_url,
  models: ['m'],
  model_mapping: {},
  priority: 0,
  weight: 1,
  enabled: true,
  config: {},
});
const create = (settings: ChannelSettings) => () => channels.decide({ type: 'CreateChannel', channelId: 'ch_1', settings, key: { sealed: 's', masked: 'm' } }, channels.initialState);

describe('provider registry', () => {
  it('is the list ChannelType accepts, in order', () => {
    expect(ChannelType.options).toEqual(Object.keys(PROVIDER_KINDS));
    expect(PROVIDER_KIND_NAMES).toEqual(Object.keys(PROVIDER_KINDS));
    expect(ChannelType.safeParse('nope').success).toBe(false);
  });

  it.each(PROVIDER_KIND_NAMES)('%s has a complete provider', (kind) => {
    const provider = PROVIDERS[kind];
    expect(provider).toBe(PROVIDER_KINDS[kind].provider);
    for (const fn of [provider.buildRequest, provider.parseResponse, provider.createStreamConverter, provider.parseError, provider.probeRequest]) expect(fn).toBeTypeOf('function');
    expect(provider.streamMediaType).toMatch(/^[a-z]+\/[a-z.+-]+$/);
  });

  it('refuses azure and custom channels without base_url, and takes them with one', () => {
    expect(PROVIDER_KIND_NAMES.filter(needsBaseUrl)).toEqual(['azure', 'custom']);
    for (const kind of ['azure', 'custom'] as const) {
      expect(defaultBaseUrl(kind, {})).toBeNull();
      expect(create(settingsOf(kind, null))).toThrow(`a ${kind} channel needs base_url`);
      expect(create(settingsOf(kind, 'https://example.test/v1'))()).toHaveLength(1);
    }
  });

  it.each(PROVIDER_KIND_NAMES.filter((kind) => !needsBaseUrl(kind)))('%s has a default http(s) base URL and needs none given', (kind) => {
    expect(new URL(defaultBaseUrl(kind, {})!).protocol).toMatch(/^https?:$/);
    expect(create(settingsOf(kind, null))()).toHaveLength(1);
  });

  it("makes bedrock's default from the channel's region", () => {
    expect(defaultBaseUrl('bedrock', {})).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
    expect(defaultBaseUrl('bedrock', { region: 'eu-west-3' })).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com');
    expect(defaultBaseUrl('bedrock', { region: ' ap-south-1 ' })).toBe('https://bedrock-runtime.ap-south-1.amazonaws.com');
    expect(defaultBaseUrl('bedrock', { region: '' })).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
  });

  it('keeps the defaults of the OpenAI-compatible kinds', () => {
    expect(defaultBaseUrl('openai', {})).toBe('https://api.openai.com/v1');
    expect(defaultBaseUrl('lmstudio', {})).toBe('http://127.0.0.1:1234/v1');
  });
});

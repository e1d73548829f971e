import { describe, expect, it } from 'vitest';
import { addToList, bodyOf, CHANNEL_TYPES, configFields, defaultBaseUrl, emptyForm, filterChannels, formOf, healthOf, listOf, type ChannelView } from './channel-form';

const stored: ChannelView = {
  id: 'ch_1',
  name: 'azure-east',
  type: 'azure',
  base_url: 'https://east.openai.azure.com',
  effective_base_url: 'https://east.openai.azure.com',
  key: 'sk-…abcd',
  models: ['gpt-4o', 'gpt-4o-mini'],
  model_mapping: { fast: 'gpt-4o-mini' },
  priority: 2,
  weight: 5,
  enabled: true,
  config: { api_version: '2024-06-01', deployment: 'prod', embedding_models: ['text-embedding-3-small'], extra: { a: 1 } },
  rate_limits: { requests_per_minute: 60, tokens_per_minute: null },
  retry_config: { max_retries: 1, backoff_multiplier: null },
  fallback_for: ['openai'],
  health: { healthy: true, cooldown_until: null, reason: null },
  last_test: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe('channel form', () => {
  it('knows the 19 kinds and their default base URLs', () => {
    expect(CHANNEL_TYPES).toHaveLength(19);
    expect(defaultBaseUrl('openai')).toBe('https://api.openai.com/v1');
    expect(defaultBaseUrl('azure')).toBeNull();
    expect(defaultBaseUrl('custom')).toBeNull();
    expect(defaultBaseUrl('bedrock', 'eu-west-1')).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    expect(defaultBaseUrl('bedrock')).toBe('https://bedrock-runtime.us-east-1.amazonaws.com');
  });

  it('offers the config keys each kind reads', () => {
    const names = (t: Parameters<typeof configFields>[0]) => configFields(t).map((f) => f.name);
    expect(names('openai')).toEqual(['organization', 'embedding_models']);
    expect(names('azure')).toEqual(['deployment', 'api_version', 'embedding_models']);
    expect(names('anthropic')).toEqual(['api_version', 'default_max_tokens']);
    expect(names('bedrock')).toEqual(['region', 'embedding_models']);
    expect(names('gemini')).toEqual(['embedding_models']);
  });

  it('round-trips a stored channel: known config fields apart, the rest as JSON', () => {
    const form = formOf(stored);
    expect(form.key).toBe('');
    expect(form.config).toEqual({ api_version: '2024-06-01', deployment: 'prod', embedding_models: 'text-embedding-3-small' });
    expect(JSON.parse(form.extraConfig)).toEqual({ extra: { a: 1 } });
    expect(form.mapping).toEqual([{ from: 'fast', to: 'gpt-4o-mini' }]);
    const result = bodyOf(form, 'edit');
    expect(result).toEqual({
      ok: true,
      body: {
        name: 'azure-east',
        type: 'azure',
        base_url: 'https://east.openai.azure.com',
        models: ['gpt-4o', 'gpt-4o-mini'],
        model_mapping: { fast: 'gpt-4o-mini' },
        priority: 2,
        weight: 5,
        enabled: true,
        config: { extra: { a: 1 }, deployment: 'prod', api_version: '2024-06-01', embedding_models: ['text-embedding-3-small'] },
        rate_limits: { requests_per_minute: 60, tokens_per_minute: null },
        retry_config: { max_retries: 1 },
        fallback_for: ['openai'],
      },
    });
    // Edit without a typed key leaves the stored one alone.
    expect(result.ok && 'key' in result.body).toBe(false);
  });

  it('builds a create body with defaults and nulls for empty limits', () => {
    const form = { ...emptyForm(), name: ' fake ', baseUrl: 'http://127.0.0.1:1/v1', key: 'sk-x', models: ['gpt-4o-mini'] };
    expect(bodyOf(form, 'create')).toEqual({
      ok: true,
      body: {
        name: 'fake',
        type: 'openai',
        base_url: 'http://127.0.0.1:1/v1',
        key: 'sk-x',
        models: ['gpt-4o-mini'],
        model_mapping: {},
        priority: 0,
        weight: 1,
        enabled: true,
        config: {},
        rate_limits: null,
        retry_config: null,
        fallback_for: [],
      },
    });
  });

  it('joins bedrock credentials into the key and keeps the region in config', () => {
    const form = { ...emptyForm('bedrock'), name: 'b', models: ['m'], awsAccessKeyId: 'AKIA', awsSecret: 'secret', config: { region: 'eu-west-1' } };
    const result = bodyOf(form, 'create');
    expect(result.ok && result.body.key).toBe('AKIA:secret');
    expect(result.ok && result.body.config).toEqual({ region: 'eu-west-1' });
    const withSession = bodyOf({ ...form, awsSessionToken: 'tok' }, 'create');
    expect(withSession.ok && withSession.body.key).toBe('AKIA:secret:tok');
  });

  it('drops config fields of another kind when the type changes', () => {
    const form = { ...emptyForm('azure'), name: 'x', models: ['m'], config: { deployment: 'd', organization: 'org' } };
    const asAzure = bodyOf(form, 'create');
    expect(asAzure.ok && asAzure.body.config).toEqual({ deployment: 'd' });
    const asOpenAi = bodyOf({ ...form, type: 'openai' }, 'create');
    expect(asOpenAi.ok && asOpenAi.body.config).toEqual({ organization: 'org' });
  });

  it('refuses bad mapping rows, numbers and JSON, naming the field', () => {
    const base = { ...emptyForm(), name: 'x', models: ['m'] };
    expect(bodyOf({ ...base, mapping: [{ from: 'a', to: '' }] }, 'create')).toEqual({ ok: false, field: 'mapping', problem: 'incomplete' });
    expect(bodyOf({ ...base, mapping: [{ from: 'a', to: 'b' }, { from: 'a', to: 'c' }] }, 'create')).toEqual({ ok: false, field: 'mapping', problem: 'duplicate' });
    expect(bodyOf({ ...base, mapping: [{ from: ' ', to: '' }] }, 'create').ok).toBe(true);
    expect(bodyOf({ ...base, priority: '1.5' }, 'create')).toEqual({ ok: false, field: 'priority', problem: 'number' });
    expect(bodyOf({ ...base, requestsPerMinute: 'ten' }, 'create')).toEqual({ ok: false, field: 'requestsPerMinute', problem: 'number' });
    expect(bodyOf({ ...base, backoffMultiplier: '1.5' }, 'create').ok).toBe(true);
    expect(bodyOf({ ...base, extraConfig: '{nope' }, 'create')).toEqual({ ok: false, field: 'extraConfig', problem: 'json' });
    expect(bodyOf({ ...base, extraConfig: '[1]' }, 'create')).toEqual({ ok: false, field: 'extraConfig', problem: 'json' });
    expect(bodyOf({ ...emptyForm('anthropic'), config: { default_max_tokens: 'lots' } }, 'create')).toEqual({ ok: false, field: 'config.default_max_tokens', problem: 'number' });
  });

  it('edits lists: add trims and ignores repeats; text lists split on lines and commas', () => {
    expect(addToList(['a'], ' b ')).toEqual(['a', 'b']);
    expect(addToList(['a'], 'a')).toEqual(['a']);
    expect(addToList(['a'], '  ')).toEqual(['a']);
    expect(listOf('a, b\nc\n\na')).toEqual(['a', 'b', 'c']);
  });

  it('tells the health of a channel', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(healthOf({ enabled: false, health: { healthy: true, cooldown_until: null, reason: null } }, now)).toBe('disabled');
    expect(healthOf({ enabled: true, health: { healthy: true, cooldown_until: null, reason: null } }, now)).toBe('healthy');
    expect(healthOf({ enabled: true, health: { healthy: false, cooldown_until: '2026-01-01T00:01:00Z', reason: 'x' } }, now)).toBe('cooling');
    expect(healthOf({ enabled: true, health: { healthy: false, cooldown_until: '2025-12-31T00:00:00Z', reason: 'x' } }, now)).toBe('unhealthy');
    // A key that does not open with the server's SECRET: broken, whatever the health says.
    expect(healthOf({ enabled: true, status: 'broken', health: { healthy: true, cooldown_until: null, reason: null } }, now)).toBe('broken');
    expect(healthOf({ enabled: false, status: 'broken', health: { healthy: true, cooldown_until: null, reason: null } }, now)).toBe('disabled');
  });

  it('filters channels by every word of a search, across name, type, URL and models', () => {
    const list = [stored, { ...stored, id: 'ch_2', name: 'groq-fast', type: 'groq' as const, models: ['llama-3.1-8b'], effective_base_url: null }];
    expect(filterChannels(list, '').map((c) => c.id)).toEqual(['ch_1', 'ch_2']);
    expect(filterChannels(list, 'LLAMA').map((c) => c.id)).toEqual(['ch_2']);
    expect(filterChannels(list, 'azure gpt-4o').map((c) => c.id)).toEqual(['ch_1']);
    expect(filterChannels(list, 'azure llama')).toEqual([]);
  });
});

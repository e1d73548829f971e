/**
 * The environment renames of 2.0 (issue 21): JWT_SECRET stands in for a missing SECRET, removed
 * 1.x variables are named, and `<PROVIDER>_API_KEY` variables become default channels. The
 * config carries the warnings (the app logs them: test/http/env-default-channels.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { defaultChannelId, defaultChannelsFromEnv, ENV_CHANNEL_KINDS, ENV_CHANNEL_MODELS, envNamesOf } from '../../src/bootstrap/default-channels.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { PROVIDER_KIND_NAMES, needsBaseUrl } from '../../src/relay/providers/index.js';

const SECRET = 'a-secret-of-sufficient-length';
const OLD_SECRET = 'the-1x-jwt-secret-value';

describe('JWT_SECRET (renamed SECRET in 2.0)', () => {
  it('is read when SECRET is missing, with a warning naming SECRET and not the value', () => {
    const c = loadConfig({ JWT_SECRET: OLD_SECRET });
    expect(c.secret).toBe(OLD_SECRET);
    expect(c.warnings).toEqual([{ variable: 'JWT_SECRET', message: 'JWT_SECRET is deprecated: it was renamed SECRET in 2.0. It is used because SECRET is not set; rename it to SECRET' }]);
    expect(JSON.stringify(c.warnings)).not.toContain(OLD_SECRET);
  });

  it('is ignored when SECRET is set: SECRET wins and the warning says so', () => {
    const c = loadConfig({ SECRET, JWT_SECRET: OLD_SECRET });
    expect(c.secret).toBe(SECRET);
    expect(c.warnings).toEqual([{ variable: 'JWT_SECRET', message: 'JWT_SECRET is ignored: SECRET is set (JWT_SECRET was renamed SECRET in 2.0; remove it)' }]);
  });

  it('an empty SECRET counts as unset; a short JWT_SECRET is refused under its own name', () => {
    expect(loadConfig({ SECRET: '', JWT_SECRET: OLD_SECRET }).secret).toBe(OLD_SECRET);
    expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(/JWT_SECRET \(read as SECRET\): SECRET must be at least 16 characters/);
  });

  it('without either, SECRET is still the variable named', () => {
    expect(() => loadConfig({})).toThrow(/SECRET is required/);
    expect(loadConfig({ SECRET }).warnings).toEqual([]);
  });
});

describe('variables removed in 2.0', () => {
  it('LEGACY_AUTH_ENABLED and OLD_API_FORMAT are each named with what replaced them; the config still loads', () => {
    const c = loadConfig({ SECRET, LEGACY_AUTH_ENABLED: 'true', OLD_API_FORMAT: 'false' });
    expect(c.warnings).toEqual([
      {
        variable: 'LEGACY_AUTH_ENABLED',
        message: 'LEGACY_AUTH_ENABLED was removed in 2.0 and is ignored: the 1.x login is gone; users sign in with access and refresh tokens (POST /v1/auth/login) and programs use API keys',
      },
      { variable: 'OLD_API_FORMAT', message: 'OLD_API_FORMAT was removed in 2.0 and is ignored: the API version is API_VERSION (v1 legacy, v2 current), or chosen per request (docs/api-versions.md)' },
    ]);
    expect(loadConfig({ SECRET, OLD_API_FORMAT: 'true' }).warnings.map((w) => w.variable)).toEqual(['OLD_API_FORMAT']);
  });
});

describe('<PROVIDER>_API_KEY default channels', () => {
  it('maps each key to a channel of that kind: its name, usual models, enabled, default base URL', () => {
    const { channels, problems, ignored } = defaultChannelsFromEnv({ OPENAI_API_KEY: 'sk-openai-1', ANTHROPIC_API_KEY: ' sk-ant-2 \n', GEMINI_API_KEY: 'AIza-3' });
    expect(problems).toEqual([]);
    expect(ignored).toEqual([]);
    expect(channels.map((c) => [c.id, c.kind, c.source, c.key])).toEqual([
      ['ch_default_openai', 'openai', 'OPENAI_API_KEY', 'sk-openai-1'],
      ['ch_default_anthropic', 'anthropic', 'ANTHROPIC_API_KEY', 'sk-ant-2'],
      ['ch_default_gemini', 'gemini', 'GEMINI_API_KEY', 'AIza-3'],
    ]);
    expect(channels[0]!.settings).toEqual({ name: 'openai', type: 'openai', base_url: null, models: [...ENV_CHANNEL_MODELS.openai], model_mapping: {}, priority: 0, weight: 1, enabled: true, config: {} });
    expect(channels[1]!.settings.models).toContain('claude-sonnet-4-5');
    expect(channels[2]!.settings.models).toContain('gemini-2.5-flash');
  });

  it('<PROVIDER>_BASE_URL and <PROVIDER>_MODELS replace the defaults', () => {
    const { channels } = defaultChannelsFromEnv({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1/', OPENAI_MODELS: 'gpt-x, gpt-y,,gpt-x' });
    expect(channels[0]!.settings).toMatchObject({ base_url: 'http://127.0.0.1:9999/v1', models: ['gpt-x', 'gpt-y'] });
  });

  it('a malformed base URL or an empty models list is a startup error naming the variable', () => {
    expect(() => loadConfig({ SECRET, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'not a url' })).toThrow(/OPENAI_BASE_URL: must be an http\(s\) URL/);
    expect(() => loadConfig({ SECRET, MISTRAL_API_KEY: 'k', MISTRAL_BASE_URL: 'ftp://x.example' })).toThrow(/MISTRAL_BASE_URL: must be an http\(s\) URL/);
    expect(() => loadConfig({ SECRET, GROQ_API_KEY: 'k', GROQ_MODELS: ' , ' })).toThrow(/GROQ_MODELS: must be a comma list of model names/);
  });

  it('a base URL or models list without its key creates nothing and is a warning; empty keys count as unset', () => {
    const c = loadConfig({ SECRET, OPENAI_BASE_URL: 'http://proxy.example/v1', DEEPSEEK_MODELS: 'deepseek-chat', ANTHROPIC_API_KEY: '' });
    expect(c.defaultChannels).toEqual([]);
    expect(c.warnings).toEqual([
      { variable: 'OPENAI_BASE_URL', message: 'OPENAI_BASE_URL is set but OPENAI_API_KEY is not: no openai channel is created from it' },
      { variable: 'DEEPSEEK_MODELS', message: 'DEEPSEEK_MODELS is set but DEEPSEEK_API_KEY is not: no deepseek channel is created from it' },
    ]);
  });

  it('covers the hosted kinds with a default URL; kinds that need one (azure, custom) and keyless local servers get no variable', () => {
    for (const kind of ENV_CHANNEL_KINDS) {
      expect(PROVIDER_KIND_NAMES).toContain(kind);
      expect(needsBaseUrl(kind)).toBe(false);
    }
    expect(ENV_CHANNEL_KINDS).toEqual(['openai', 'anthropic', 'gemini', 'cohere', 'mistral', 'deepseek', 'groq', 'openrouter', 'xai', 'moonshot', 'zhipu', 'qwen']);
    for (const kind of ['azure', 'custom', 'bedrock', 'ollama', 'vllm', 'llamacpp', 'lmstudio']) {
      expect(defaultChannelsFromEnv({ [`${kind.toUpperCase()}_API_KEY`]: 'k' }).channels).toEqual([]);
    }
    expect(envNamesOf('xai')).toEqual({ apiKey: 'XAI_API_KEY', baseUrl: 'XAI_BASE_URL', models: 'XAI_MODELS' });
    expect(defaultChannelId('qwen')).toBe('ch_default_qwen');
  });

  it('the config carries the channels (keys in it, never in its warnings)', () => {
    const c = loadConfig({ SECRET, OPENAI_API_KEY: 'sk-secret-openai', OPENAI_MODELS: 'm1' });
    expect(c.defaultChannels.map((d) => [d.kind, d.key, d.settings.models])).toEqual([['openai', 'sk-secret-openai', ['m1']]]);
    expect(JSON.stringify(c.warnings)).not.toContain('sk-secret-openai');
  });
});

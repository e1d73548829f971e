import { describe, expect, it } from 'vitest';
import { CHAT_DEFAULTS, ChatPreferences, chatDefaults, isLanguageTag, MAX_PREFERRED_MAX_TOKENS } from '../../src/conversations/preferences.js';

describe('chat preferences', () => {
  it('fills every unset key with its default', () => {
    expect(chatDefaults({})).toEqual({ theme: 'system', language: 'en', default_model: null, temperature: 0.7, max_tokens: 2048 });
    expect(chatDefaults({})).toEqual(CHAT_DEFAULTS);
  });

  it('takes the stored values of the known keys and ignores the others', () => {
    const preferences = { theme: 'dark', language: 'pt-BR', default_model: 'gpt-4o', temperature: 0, max_tokens: 512, sidebar: 'collapsed' };
    expect(chatDefaults(preferences)).toEqual({ theme: 'dark', language: 'pt-BR', default_model: 'gpt-4o', temperature: 0, max_tokens: 512 });
  });

  it('treats an invalid stored value (from before the keys were validated) as unset', () => {
    expect(chatDefaults({ theme: 'neon', language: 'not a tag', default_model: '', temperature: 3, max_tokens: 1.5 })).toEqual(CHAT_DEFAULTS);
    expect(chatDefaults({ temperature: '0.2', max_tokens: '100', default_model: 42 })).toEqual(CHAT_DEFAULTS);
    expect(chatDefaults({ max_tokens: MAX_PREFERRED_MAX_TOKENS + 1 }).max_tokens).toBe(2048);
  });

  it('reads only own keys, never what a plain object inherits', () => {
    const inherited = Object.create({ theme: 'dark', temperature: 1 }) as Record<string, unknown>;
    expect(chatDefaults(inherited)).toEqual(CHAT_DEFAULTS);
  });

  it('accepts BCP 47 tags and refuses anything else', () => {
    for (const tag of ['en', 'de', 'pt-BR', 'zh-Hant-TW', 'sr-Latn', 'es-419', 'en-US-x-twain']) expect(isLanguageTag(tag), tag).toBe(true);
    for (const tag of ['', 'e', 'english!', 'en_US', 'en--US', '12', 'en-US-']) expect(isLanguageTag(tag), tag).toBe(false);
  });

  it('validates each known key with its bounds', () => {
    expect(ChatPreferences.safeParse({ temperature: 2, max_tokens: MAX_PREFERRED_MAX_TOKENS }).success).toBe(true);
    for (const bad of [{ temperature: -0.1 }, { temperature: 2.01 }, { max_tokens: 0 }, { max_tokens: 10.5 }, { max_tokens: MAX_PREFERRED_MAX_TOKENS + 1 }, { theme: 'blue' }, { default_model: '  ' }]) {
      expect(ChatPreferences.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

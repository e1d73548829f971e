import { describe, expect, it } from 'vitest';
import { EMPTY_SETTINGS, settingsBody, settingsOf } from './settings-logic';

describe('conversation settings form', () => {
  it('sends blanks as null (the user default) and numbers as numbers', () => {
    expect(settingsBody(EMPTY_SETTINGS)).toEqual({ model: null, preset_id: null, temperature: null, max_tokens: null, system_prompt: null });
    expect(settingsBody({ model: ' gpt-x ', presetId: 'p1', temperature: '0.5', maxTokens: '200', systemPrompt: 'Be brief.' })).toEqual({
      model: 'gpt-x',
      preset_id: 'p1',
      temperature: 0.5,
      max_tokens: 200,
      system_prompt: 'Be brief.',
    });
  });

  it('round-trips a conversation', () => {
    const c = { model: 'm', preset_id: null, temperature: 1, max_tokens: null, system_prompt: null };
    expect(settingsBody(settingsOf(c))).toEqual({ model: 'm', preset_id: null, temperature: 1, max_tokens: null, system_prompt: null });
  });
});

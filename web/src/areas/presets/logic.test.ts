import { describe, expect, it } from 'vitest';
import { avatarOf, categoryKey, EMPTY_PRESET, parseTags, presetBody, presetForm, searchQuery, systemPromptOf, topTags, type Preset } from './logic';

describe('avatarOf', () => {
  it('draws emoji codes as emoji, keeps emoji and text, shows URLs as images', () => {
    expect(avatarOf('1f4ca')).toEqual({ kind: 'emoji', text: '📊' });
    expect(avatarOf('2709-fe0f')).toEqual({ kind: 'emoji', text: '✉️' });
    expect(avatarOf('🤖')).toEqual({ kind: 'emoji', text: '🤖' });
    expect(avatarOf('https://example.com/a.png')).toEqual({ kind: 'image', url: 'https://example.com/a.png' });
    expect(avatarOf('  ')).toBeNull();
  });
});

describe('categories and tags', () => {
  it('maps a category in any case to its label key', () => {
    expect(categoryKey('business')).toBe('business');
    expect(categoryKey('Business')).toBe('business');
    expect(categoryKey('professional')).toBe('professional');
    expect(categoryKey(null)).toBeNull();
    expect(categoryKey('Cooking')).toBeNull();
  });

  it('splits tags on commas (also the Chinese one), dropping blanks and repeats of any case', () => {
    expect(parseTags('sql, SQL ,data，报表\n\n')).toEqual(['sql', 'data', '报表']);
  });

  it('offers the most used tags first', () => {
    expect(topTags([{ tags: ['b', 'a'] }, { tags: ['A', 'c'] }, { tags: ['b'] }], 2)).toEqual(['a', 'b']);
  });
});

describe('presetBody', () => {
  it('sends every field, blanks as null / empty', () => {
    expect(presetBody({ ...EMPTY_PRESET, name: ' Tutor ' })).toEqual({
      problems: [],
      body: { name: 'Tutor', description: '', avatar: '', category: null, tags: [], lang: null, visibility: 'private', system_prompt: null, context: [], model_preferences: [], temperature: null, max_tokens: null },
    });
  });

  it('maps a full form', () => {
    const { body } = presetBody({
      ...EMPTY_PRESET,
      name: 'SQL helper',
      category: 'Technical',
      tags: 'sql, data',
      visibility: 'team',
      systemPrompt: 'You write SQL.',
      context: [{ role: 'user', content: 'Example?' }],
      models: 'gpt-a, gpt-b gpt-a',
      temperature: '0.2',
      maxTokens: '800',
    });
    expect(body).toMatchObject({
      category: 'Technical',
      tags: ['sql', 'data'],
      visibility: 'team',
      system_prompt: 'You write SQL.',
      context: [{ role: 'user', content: 'Example?' }],
      model_preferences: ['gpt-a', 'gpt-b'],
      temperature: 0.2,
      max_tokens: 800,
    });
  });

  it('names what is wrong', () => {
    expect(presetBody({ ...EMPTY_PRESET, temperature: '3', maxTokens: '0', context: [{ role: 'user', content: ' ' }] }).problems).toEqual([
      { field: 'name', problem: 'required' },
      { field: 'temperature', problem: 'notTemperature', value: '3' },
      { field: 'maxTokens', problem: 'notMaxTokens', value: '0' },
      { field: 'context', problem: 'emptyMessage' },
    ]);
  });
});

const preset: Preset = {
  id: 'pst_1',
  builtin: false,
  owner_id: 'u',
  name: 'Tutor',
  description: 'Explains',
  avatar: '1f989',
  lang: 'en',
  category: 'Education',
  tags: ['math', 'school'],
  context: [{ role: 'system', content: 'Be patient.' }],
  public: false,
  visibility: 'team',
  model_preferences: ['gpt-a'],
  temperature: 0.5,
  max_tokens: 1000,
  system_prompt: null,
  version: null,
  revision: 1,
  cloned_from: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe('presetForm', () => {
  it('round-trips a preset through the form', () => {
    expect(presetBody(presetForm(preset)).body).toEqual({
      name: 'Tutor',
      description: 'Explains',
      avatar: '1f989',
      category: 'Education',
      tags: ['math', 'school'],
      lang: 'en',
      visibility: 'team',
      system_prompt: null,
      context: [{ role: 'system', content: 'Be patient.' }],
      model_preferences: ['gpt-a'],
      temperature: 0.5,
      max_tokens: 1000,
    });
  });

  it('shows the context system messages when there is no system prompt', () => {
    expect(systemPromptOf(preset)).toBe('Be patient.');
    expect(systemPromptOf({ ...preset, system_prompt: 'Own' })).toBe('Own');
    expect(systemPromptOf({ ...preset, context: [] })).toBeNull();
  });
});

describe('searchQuery', () => {
  it('leaves out empty filters', () => {
    expect(searchQuery({ q: ' ', scope: 'all', category: '', tags: [] })).toEqual({ scope: 'all', limit: 24, offset: 0 });
    expect(searchQuery({ q: 'sql', scope: 'mine', category: 'Technical', tags: ['a', 'b'] }, 24)).toEqual({ scope: 'mine', limit: 24, offset: 24, q: 'sql', category: 'Technical', tags: 'a,b' });
  });
});

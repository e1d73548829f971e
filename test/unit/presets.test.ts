/** Pure parts of presets: search scoring, LIKE escaping, applying a preset to a relay request, the data-file reader. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBuiltinPresets } from '../../src/presets/builtin.js';
import { containsPattern, scorePreset, SEARCH_WEIGHTS, termsOf } from '../../src/presets/search.js';
import { applyPreset, type RelayPreset } from '../../src/relay/presets.js';

describe('preset search scoring', () => {
  const score = (name: string, description = '', tags: string[] = [], q = 'mail') => scorePreset({ name: name.toLowerCase(), description: description.toLowerCase(), tags }, termsOf(q));

  it('ranks name > tag > description > context', () => {
    const ranked = [score('mail'), score('Mail writer'), score('Gmail helper'), score('x', '', ['mail']), score('x', '', ['emails']), score('x', 'about mail'), score('x')];
    expect(ranked).toEqual([...ranked].sort((a, b) => b - a));
    expect(new Set(ranked).size).toBe(ranked.length);
    expect(score('x')).toBe(SEARCH_WEIGHTS.context);
  });

  it('sums over terms and rewards the phrase in the name', () => {
    expect(score('Email writer', '', [], 'email writer')).toBeGreaterThan(score('Writer of email', '', [], 'email writer'));
    expect(score('email writer', '', [], 'email writer')).toBeGreaterThan(score('Email writer pro', '', [], 'email writer'));
  });

  it('splits, lower-cases and de-duplicates terms', () => {
    expect(termsOf('  Mail  mail WRITER ')).toEqual(['mail', 'writer']);
    expect(termsOf(undefined)).toEqual([]);
    expect(termsOf(Array.from({ length: 20 }, (_, i) => `t${i}`).join(' '))).toHaveLength(10);
  });

  it('escapes LIKE wildcards', () => {
    expect(containsPattern('50%_off!')).toBe('%50!%!_off!!%');
  });
});

describe('applying a preset to a relay request', () => {
  const preset: RelayPreset = {
    context: [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: 'A', name: 'bot' },
    ],
    model_preferences: ['m1', 'm2'],
    temperature: 0.3,
    max_tokens: 100,
    system_prompt: 'Be brief.',
  };
  const all = () => true;

  it('fills the model, settings and prepends the system prompt and context; strips preset_id', () => {
    const out = applyPreset({ preset_id: 'p', messages: [{ role: 'user', content: 'hi' }], stream: true }, preset, (m) => m === 'm2');
    expect(out).toEqual({
      model: 'm2',
      temperature: 0.3,
      max_tokens: 100,
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Q' },
        { role: 'assistant', content: 'A', name: 'bot' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('keeps what the request set', () => {
    const out = applyPreset({ preset_id: 'p', model: 'mine', temperature: 0, max_completion_tokens: 5, messages: [{ role: 'developer', content: 'own rules' }] }, preset, all);
    expect(out).toEqual({ model: 'mine', temperature: 0, max_completion_tokens: 5, messages: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: 'A', name: 'bot' }, { role: 'developer', content: 'own rules' }] });
  });

  it('falls back to the first preference, and leaves the model unset without preferences', () => {
    expect(applyPreset({ model: '', messages: [] }, preset, () => false).model).toBe('m1');
    expect(applyPreset({ messages: [] }, { ...preset, model_preferences: [] }, all)).not.toHaveProperty('model');
    expect(applyPreset({ model: null, messages: 'not an array' }, { ...preset, model_preferences: [] }, all)).toMatchObject({ model: null, messages: 'not an array' });
  });
});

describe('built-in data reader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-reader-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const valid = (id: string) => ({ id, version: 1, name: id, lang: 'en', category: 'Legal', context: [{ role: 'system', content: 'x' }] });

  it('reads files and arrays, reports bad ones, and copes with a missing folder', () => {
    mkdirSync(join(dir, 'en'));
    writeFileSync(join(dir, 'en', 'one.json'), JSON.stringify(valid('one')));
    writeFileSync(join(dir, 'en', 'many.json'), JSON.stringify([valid('two'), { ...valid('three'), context: [] }]));
    writeFileSync(join(dir, 'en', 'notes.txt'), 'ignored');
    writeFileSync(join(dir, 'top.json'), JSON.stringify({ ...valid('bad id!') }));
    const { presets, problems } = readBuiltinPresets(dir);
    expect(presets.map((p) => p.presetId).sort()).toEqual(['one', 'two']);
    expect(presets[0]!.content).toMatchObject({ description: '', avatar: '', tags: [], model_preferences: [], temperature: null, max_tokens: null, system_prompt: null });
    expect(problems.map((p) => p.file).sort()).toEqual([join('en', 'many.json[1]'), 'top.json']);
    expect(readBuiltinPresets(join(dir, 'missing'))).toEqual({ presets: [], problems: [] });
  });
});

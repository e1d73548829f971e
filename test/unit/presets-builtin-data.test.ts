/**
 * The shipped built-in presets (presets/builtin/<lang>/*.json), read directly: enough of them,
 * valid, and written to the catalogue's rules (system prompt length, example exchanges, both
 * languages, every category).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESET_CATEGORIES } from '../../src/commands/presets/content.js';
import { BuiltinPresetFile, defaultBuiltinPresetsDir, readBuiltinPresets } from '../../src/presets/builtin.js';

const dir = defaultBuiltinPresetsDir();

function files(): Array<{ file: string; json: unknown }> {
  const out: Array<{ file: string; json: unknown }> = [];
  for (const lang of readdirSync(dir).sort()) {
    for (const name of readdirSync(join(dir, lang)).filter((n) => n.endsWith('.json')).sort()) {
      out.push({ file: `${lang}/${name}`, json: JSON.parse(readFileSync(join(dir, lang, name), 'utf8')) as unknown });
    }
  }
  return out;
}

describe('built-in presets data', () => {
  const all = files();
  const parsed = all.map(({ file, json }) => ({ file, result: BuiltinPresetFile.safeParse(json) }));
  const presets = parsed.flatMap(({ file, result }) => (result.success ? [{ file, preset: result.data }] : []));

  it('has at least 40 presets, every one valid', () => {
    expect(all.length).toBeGreaterThanOrEqual(40);
    for (const { file, result } of parsed) expect(result.success ? '' : `${file}: ${result.error.message}`, file).toBe('');
    expect(readBuiltinPresets(dir).problems).toEqual([]);
    expect(new Set(presets.map((p) => p.preset.id)).size).toBe(presets.length);
  });

  it('opens with a system prompt of 300 to 1000 characters, then 2 to 5 user/assistant example pairs', () => {
    for (const { file, preset } of presets) {
      const [system, ...examples] = preset.context;
      expect(system?.role, file).toBe('system');
      expect(system!.content.length, `${file}: system prompt length`).toBeGreaterThanOrEqual(300);
      expect(system!.content.length, `${file}: system prompt length`).toBeLessThanOrEqual(1000);
      expect(examples.length % 2, `${file}: examples come in pairs`).toBe(0);
      const pairs = examples.length / 2;
      expect(pairs, `${file}: example pairs`).toBeGreaterThanOrEqual(2);
      expect(pairs, `${file}: example pairs`).toBeLessThanOrEqual(5);
      examples.forEach((m, i) => expect(m.role, `${file}: message ${i + 1}`).toBe(i % 2 === 0 ? 'user' : 'assistant'));
    }
  });

  it('covers both languages (at least 15 each) with the folder matching the lang', () => {
    for (const { file, preset } of presets) expect(file.split('/')[0], file).toBe(preset.lang);
    for (const lang of ['en', 'cn']) expect(presets.filter((p) => p.preset.lang === lang).length, lang).toBeGreaterThanOrEqual(15);
  });

  it('has every category', () => {
    const categories = new Set(presets.map((p) => p.preset.category));
    for (const category of PRESET_CATEGORIES) expect(categories.has(category), category).toBe(true);
  });
});

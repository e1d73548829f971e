/** Built-in preset data files for tests, written to a temporary folder (PRESETS_BUILTIN_DIR). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

/** A valid data file (the format of presets/builtin/<lang>/*.json); `extra` overrides fields. */
export function builtinFile(id: string, version: number | string, extra: Json = {}): Json {
  return {
    id,
    version,
    avatar: '1f916',
    name: `Built-in ${id}`,
    description: 'A built-in made for the tests',
    lang: 'en',
    category: 'Technical',
    tags: ['testing', 'builtin'],
    context: [
      { role: 'system', content: `You are the ${id} test assistant.` },
      { role: 'user', content: 'Example question' },
      { role: 'assistant', content: 'Example answer' },
    ],
    model_preferences: [],
    temperature: 0.4,
    max_tokens: null,
    ...extra,
  };
}

export function writeBuiltin(dir: string, lang: string, preset: Json): void {
  mkdirSync(join(dir, lang), { recursive: true });
  writeFileSync(join(dir, lang, `${String(preset.id)}.json`), JSON.stringify(preset, null, 2));
}

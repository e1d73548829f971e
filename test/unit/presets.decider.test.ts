/** Given / when / then over the preset deciders (user presets and the built-in catalogue): pure, no I/O. */
import { describe, expect, it } from 'vitest';
import type { PresetContent } from '../../src/commands/presets/content.js';
import { builtinPresets, presets, type BuiltinPresetInput, type PresetCommand } from '../../src/commands/presets/decider.js';
import type { BuiltinPresetEvent, PresetEvent } from '../../src/commands/presets/events.js';
import { AppError, BadRequestError, NotFoundError } from '../../src/errors.js';

const content = (over: Partial<PresetContent> = {}): PresetContent => ({
  name: 'Writer',
  description: '',
  avatar: '',
  tags: [],
  category: null,
  lang: null,
  context: [{ role: 'user', content: 'hello' }],
  model_preferences: [],
  temperature: null,
  max_tokens: null,
  system_prompt: null,
  visibility: 'private',
  ...over,
});

const created = (over: Partial<PresetContent> = {}): PresetEvent => ({
  type: 'PresetCreated',
  data: { preset_id: 'p1', owner_id: 'u1', cloned_from: null, ...content(over) },
});

function given(history: PresetEvent[]) {
  const state = history.reduce(presets.evolve, presets.initialState);
  return { when: (command: PresetCommand) => presets.decide(command, state), state };
}

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? `${error.status}:${error.code}` : String(error);
  }
  return 'no error';
};

describe('preset decider', () => {
  it('creates a preset with normalised content', () => {
    const events = given([]).when({ type: 'CreatePreset', presetId: 'p1', ownerId: 'u1', clonedFrom: null, content: content({ name: '  Writer ', tags: ['a', ' A', 'b'], model_preferences: ['m', 'm'], system_prompt: '  ' }) });
    expect(events).toEqual([{ type: 'PresetCreated', data: { preset_id: 'p1', owner_id: 'u1', cloned_from: null, ...content({ tags: ['a', 'b'], model_preferences: ['m'] }) } }]);
  });

  it('refuses to create twice', () => {
    expect(codeOf(() => given([created()]).when({ type: 'CreatePreset', presetId: 'p1', ownerId: 'u1', clonedFrom: null, content: content() }))).toBe('409:preset_exists');
  });

  it('validates with 400s that name the problem', () => {
    const create = (over: Partial<PresetContent>) => () => given([]).when({ type: 'CreatePreset', presetId: 'p', ownerId: 'u', clonedFrom: null, content: content(over) });
    expect(codeOf(create({ name: ' ' }))).toBe('400:invalid_preset');
    expect(codeOf(create({ category: 'Astrology' }))).toBe('400:unknown_category');
    expect(codeOf(create({ context: [{ role: 'tool', content: 'x' }] }))).toBe('400:invalid_role');
    expect(codeOf(create({ context: Array.from({ length: 101 }, () => ({ role: 'user', content: 'x' })) }))).toBe('400:context_too_large');
    expect(codeOf(create({ context: [{ role: 'user', content: 'x'.repeat(90_000) }], system_prompt: 'y'.repeat(10_001) }))).toBe('400:context_too_large');
    expect(codeOf(create({ temperature: 2.5 }))).toBe('400:invalid_preset');
    expect(codeOf(create({ max_tokens: 0 }))).toBe('400:invalid_preset');
    expect(codeOf(create({ visibility: 'everyone' as never }))).toBe('400:invalid_preset');
    expect(codeOf(create({ category: 'business', context: Array.from({ length: 100 }, () => ({ role: 'assistant', content: 'x' })) }))).toBe('no error');
    expect(() => create({ name: '' })()).toThrow(BadRequestError);
  });

  it('updates only what changed, and decides nothing for no change', () => {
    const { when } = given([created()]);
    expect(when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Writer', tags: [] } })).toEqual([]);
    expect(when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Poet', visibility: 'team', temperature: 0.5 } })).toEqual([
      { type: 'PresetUpdated', data: { name: 'Poet', temperature: 0.5, visibility: 'team' } },
    ]);
  });

  it("treats someone else's, a missing or a deleted preset as not found", () => {
    const update: PresetCommand = { type: 'UpdatePreset', ownerId: 'u2', changes: { name: 'x' } };
    expect(() => given([created()]).when(update)).toThrow(NotFoundError);
    expect(() => given([]).when({ ...update, ownerId: 'u1' })).toThrow(NotFoundError);
    const deleted = given([created(), { type: 'PresetDeleted', data: { by: 'u1' } }]);
    expect(codeOf(() => deleted.when({ type: 'DeletePreset', ownerId: 'u1', by: 'u1' }))).toBe('404:preset_not_found');
    expect(given([created()]).when({ type: 'DeletePreset', ownerId: 'u1', by: 'u1' })).toEqual([{ type: 'PresetDeleted', data: { by: 'u1' } }]);
  });

  it('honours the expected revision (If-Match)', () => {
    const history: PresetEvent[] = [created(), { type: 'PresetUpdated', data: { name: 'Two' } }];
    const { when, state } = given(history);
    expect(state.revision).toBe(2);
    expect(codeOf(() => when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Three' }, expectedRevision: 1 }))).toBe('412:precondition_failed');
    expect(when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Three' }, expectedRevision: 2 })).toHaveLength(1);
    expect(codeOf(() => when({ type: 'DeletePreset', ownerId: 'u1', by: null, expectedRevision: 1 }))).toBe('412:precondition_failed');
  });

  it('folds history into state', () => {
    const { state } = given([created({ tags: ['a'] }), { type: 'PresetUpdated', data: { name: 'Two', visibility: 'public' } }, { type: 'PresetDeleted', data: { by: null } }]);
    expect(state).toMatchObject({ exists: true, deleted: true, ownerId: 'u1', revision: 3, content: { name: 'Two', visibility: 'public', tags: ['a'] } });
  });
});

describe('built-in catalogue decider', () => {
  const input = (presetId: string, version: string, name = presetId): BuiltinPresetInput => ({ presetId, version, content: { ...content({ name, category: 'Technical' }), visibility: undefined } as never });
  const published = (presetId: string, version: string): BuiltinPresetEvent => ({ type: 'BuiltinPresetPublished', data: { preset_id: presetId, version, ...content({ name: presetId, category: 'Technical' }) } as never });
  const decide = (history: BuiltinPresetEvent[], presetsIn: BuiltinPresetInput[]) =>
    builtinPresets.decide({ type: 'PublishBuiltinPresets', presets: presetsIn }, history.reduce(builtinPresets.evolve, builtinPresets.initialState)).map((e) => `${e.data.preset_id}@${e.data.version}`);

  it('publishes what is new or newer, and nothing else', () => {
    expect(decide([], [input('a', '1'), input('b', '1')])).toEqual(['a@1', 'b@1']);
    const history = [published('a', '1'), published('b', '2')];
    expect(decide(history, [input('a', '1'), input('b', '1')])).toEqual([]);
    expect(decide(history, [input('a', '2'), input('b', '2'), input('c', '1')])).toEqual(['a@2', 'c@1']);
  });

  it('compares versions numerically, part by part', () => {
    expect(decide([published('a', '1.9')], [input('a', '1.10')])).toEqual(['a@1.10']);
    expect(decide([published('a', '10')], [input('a', '9')])).toEqual([]);
    expect(decide([published('a', '1')], [input('a', '1.0')])).toEqual([]);
    expect(decide([published('a', '1.0')], [input('a', '1.0.1')])).toEqual(['a@1.0.1']);
  });

  it('publishes built-in presets named like Object.prototype properties (versions are looked up by own keys)', () => {
    expect(decide([], [input('constructor', '1'), input('toString', '1')])).toEqual(['constructor@1', 'toString@1']);
    expect(decide([published('constructor', '1')], [input('constructor', '1'), input('valueOf', '2')])).toEqual(['valueOf@2']);
  });

  it('takes the first of duplicate ids in one command', () => {
    expect(decide([], [input('a', '1', 'first'), input('a', '2', 'second')])).toEqual(['a@1']);
  });
});

/** Given / when / then over the preset deciders (user presets and the built-in catalogue): pure, no I/O. */
import { describe, expect, it } from 'vitest';
import type { PresetContent } from '../../src/commands/presets/content.js';
import { builtinPresets, presets, type BuiltinPresetInput, type PresetCommand } from '../../src/commands/presets/decider.js';
import type { BuiltinPresetEvent, PresetEvent } from '../../src/commands/presets/events.js';
import { AppError, BadRequestError, NotFoundError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

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

const spec = DeciderSpec.for(presets);
/** An application error with this HTTP status and code. */
const refusal = (status: number, code: string) => [AppError, { status, code }] as const;

describe('preset decider', () => {
  it('creates a preset with normalised content', () => {
    spec
      .given([])
      .when({ type: 'CreatePreset', presetId: 'p1', ownerId: 'u1', clonedFrom: null, content: content({ name: '  Writer ', tags: ['a', ' A', 'b'], model_preferences: ['m', 'm'], system_prompt: '  ' }) })
      .then([{ type: 'PresetCreated', data: { preset_id: 'p1', owner_id: 'u1', cloned_from: null, ...content({ tags: ['a', 'b'], model_preferences: ['m'] }) } }]);
  });

  it('refuses to create twice', () => {
    spec.given([created()]).when({ type: 'CreatePreset', presetId: 'p1', ownerId: 'u1', clonedFrom: null, content: content() }).thenThrows(...refusal(409, 'preset_exists'));
  });

  it('validates with 400s that name the problem', () => {
    const create = (over: Partial<PresetContent>) => spec.given([]).when({ type: 'CreatePreset', presetId: 'p', ownerId: 'u', clonedFrom: null, content: content(over) });
    create({ name: ' ' }).thenThrows(...refusal(400, 'invalid_preset'));
    create({ category: 'Astrology' }).thenThrows(...refusal(400, 'unknown_category'));
    create({ context: [{ role: 'tool', content: 'x' }] }).thenThrows(...refusal(400, 'invalid_role'));
    create({ context: Array.from({ length: 101 }, () => ({ role: 'user', content: 'x' })) }).thenThrows(...refusal(400, 'context_too_large'));
    create({ context: [{ role: 'user', content: 'x'.repeat(90_000) }], system_prompt: 'y'.repeat(10_001) }).thenThrows(...refusal(400, 'context_too_large'));
    create({ temperature: 2.5 }).thenThrows(...refusal(400, 'invalid_preset'));
    create({ max_tokens: 0 }).thenThrows(...refusal(400, 'invalid_preset'));
    create({ visibility: 'everyone' as never }).thenThrows(...refusal(400, 'invalid_preset'));
    const longest = { category: 'business', context: Array.from({ length: 100 }, () => ({ role: 'assistant', content: 'x' })) };
    create(longest).then([{ type: 'PresetCreated', data: { preset_id: 'p', owner_id: 'u', cloned_from: null, ...content(longest) } }]);
    create({ name: '' }).thenThrows(BadRequestError);
  });

  it('updates only what changed, and decides nothing for no change', () => {
    const { when } = spec.given([created()]);
    when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Writer', tags: [] } }).thenNothingHappened();
    when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Poet', visibility: 'team', temperature: 0.5 } }).then([
      { type: 'PresetUpdated', data: { name: 'Poet', temperature: 0.5, visibility: 'team' } },
    ]);
  });

  it("treats someone else's, a missing or a deleted preset as not found", () => {
    const update: PresetCommand = { type: 'UpdatePreset', ownerId: 'u2', changes: { name: 'x' } };
    spec.given([created()]).when(update).thenThrows(NotFoundError);
    spec.given([]).when({ ...update, ownerId: 'u1' }).thenThrows(NotFoundError);
    spec.given([created(), { type: 'PresetDeleted', data: { by: 'u1' } }]).when({ type: 'DeletePreset', ownerId: 'u1', by: 'u1' }).thenThrows(...refusal(404, 'preset_not_found'));
    spec.given([created()]).when({ type: 'DeletePreset', ownerId: 'u1', by: 'u1' }).then([{ type: 'PresetDeleted', data: { by: 'u1' } }]);
  });

  it('honours the expected revision (If-Match)', () => {
    const history: PresetEvent[] = [created(), { type: 'PresetUpdated', data: { name: 'Two' } }];
    const { when, state } = spec.given(history);
    expect(state.revision).toBe(2);
    when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Three' }, expectedRevision: 1 }).thenThrows(...refusal(412, 'precondition_failed'));
    when({ type: 'UpdatePreset', ownerId: 'u1', changes: { name: 'Three' }, expectedRevision: 2 }).then([{ type: 'PresetUpdated', data: { name: 'Three' } }]);
    when({ type: 'DeletePreset', ownerId: 'u1', by: null, expectedRevision: 1 }).thenThrows(...refusal(412, 'precondition_failed'));
  });

  it('folds history into state', () => {
    const { state } = spec.given([created({ tags: ['a'] }), { type: 'PresetUpdated', data: { name: 'Two', visibility: 'public' } }, { type: 'PresetDeleted', data: { by: null } }]);
    expect(state).toMatchObject({ exists: true, deleted: true, ownerId: 'u1', revision: 3, content: { name: 'Two', visibility: 'public', tags: ['a'] } });
  });
});

describe('built-in catalogue decider', () => {
  const catalogue = DeciderSpec.for(builtinPresets);
  /** A built-in's content as its data file gives it: no visibility (built-ins are for everyone). */
  const builtinContent = (name: string) => ({ ...content({ name, category: 'Technical' }), visibility: undefined });
  const input = (presetId: string, version: string, name = presetId): BuiltinPresetInput => ({ presetId, version, content: builtinContent(name) as never });
  const published = (presetId: string, version: string, name = presetId): BuiltinPresetEvent => ({ type: 'BuiltinPresetPublished', data: { preset_id: presetId, version, ...builtinContent(name) } as never });
  const publish = (history: BuiltinPresetEvent[], presetsIn: BuiltinPresetInput[]) => catalogue.given(history).when({ type: 'PublishBuiltinPresets', presets: presetsIn });

  it('publishes what is new or newer, and nothing else', () => {
    publish([], [input('a', '1'), input('b', '1')]).then([published('a', '1'), published('b', '1')]);
    const history = [published('a', '1'), published('b', '2')];
    publish(history, [input('a', '1'), input('b', '1')]).thenNothingHappened();
    publish(history, [input('a', '2'), input('b', '2'), input('c', '1')]).then([published('a', '2'), published('c', '1')]);
  });

  it('compares versions numerically, part by part', () => {
    publish([published('a', '1.9')], [input('a', '1.10')]).then([published('a', '1.10')]);
    publish([published('a', '10')], [input('a', '9')]).thenNothingHappened();
    publish([published('a', '1')], [input('a', '1.0')]).thenNothingHappened();
    publish([published('a', '1.0')], [input('a', '1.0.1')]).then([published('a', '1.0.1')]);
  });

  it('publishes built-in presets named like Object.prototype properties (versions are looked up by own keys)', () => {
    publish([], [input('constructor', '1'), input('toString', '1')]).then([published('constructor', '1'), published('toString', '1')]);
    publish([published('constructor', '1')], [input('constructor', '1'), input('valueOf', '2')]).then([published('valueOf', '2')]);
  });

  it('takes the first of duplicate ids in one command', () => {
    publish([], [input('a', '1', 'first'), input('a', '2', 'second')]).then([published('a', '1', 'first')]);
  });
});

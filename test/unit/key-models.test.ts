/**
 * A key's model rules: `permissions.models` and `model_restrictions.allowed_models` are kept
 * apart and a model must pass both (either alone narrows by itself), blocked models win, and a
 * policy written before the two were apart still means what it meant.
 */
import { describe, expect, it } from 'vitest';
import { policyFrom } from '../../src/api/routes/keys.js';
import type { KeyPolicy } from '../../src/commands/keys/events.js';
import { allowedModelsOf, compileKey, keyAllowsModel } from '../../src/views/keys.js';

const policyOf = (input: Parameters<typeof policyFrom>[0], base?: KeyPolicy) => policyFrom(input, base);
const allows = (policy: KeyPolicy) => (model: string) => keyAllowsModel(compileKey('key_1', 't', 'u', 'k', policy), model);
const MODELS = ['a', 'b', 'c', 'd'];

describe('a key\'s model lists', () => {
  it('allows what both lists allow, what either alone allows, or everything', () => {
    expect(MODELS.filter(allows(policyOf({ permissions: { models: ['a', 'b', 'c'] }, model_restrictions: { allowed_models: ['b', 'c', 'd'] } })))).toEqual(['b', 'c']);
    expect(MODELS.filter(allows(policyOf({ permissions: { models: ['a', 'b'] } })))).toEqual(['a', 'b']);
    expect(MODELS.filter(allows(policyOf({ model_restrictions: { allowed_models: ['d'] } })))).toEqual(['d']);
    expect(MODELS.filter(allows(policyOf({ permissions: { models: [] }, model_restrictions: { allowed_models: [] } })))).toEqual(MODELS);
  });

  it('allows nothing when the lists have nothing in common, and lets blocked models win', () => {
    expect(allowedModelsOf({ permitted_models: ['a'], allowed_models: ['b'] })).toEqual(new Set());
    expect(MODELS.filter(allows(policyOf({ permissions: { models: ['a'] }, model_restrictions: { allowed_models: ['b'] } })))).toEqual([]);
    expect(MODELS.filter(allows(policyOf({ permissions: { models: ['a', 'b'] }, model_restrictions: { allowed_models: ['a', 'b'], blocked_models: ['a'] } })))).toEqual(['b']);
    expect(MODELS.filter(allows(policyOf({ model_restrictions: { blocked_models: ['c'] } })))).toEqual(['a', 'b', 'd']);
  });

  it('keeps the list a change does not name', () => {
    const base = policyOf({ permissions: { models: ['a', 'b'] }, model_restrictions: { allowed_models: ['b', 'c'] } });
    const changed = policyOf({ model_restrictions: { allowed_models: ['a'] } }, base);
    expect(changed).toMatchObject({ permitted_models: ['a', 'b'], allowed_models: ['a'] });
    expect(policyOf({ permissions: { models: ['c'] } }, base)).toMatchObject({ permitted_models: ['c'], allowed_models: ['b', 'c'] });
  });

  it('reads a policy from before permitted_models as the one list it was', () => {
    const { permitted_models: _dropped, ...old } = policyOf({ model_restrictions: { allowed_models: ['a', 'b'] } });
    expect(MODELS.filter(allows(old as KeyPolicy))).toEqual(['a', 'b']);
    expect(allowedModelsOf({ allowed_models: [] })).toBeNull();
  });
});

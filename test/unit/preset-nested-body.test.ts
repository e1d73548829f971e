/** The spec's nested preset body becomes the flat form; a field in both forms is found. */
import { describe, expect, it } from 'vitest';
import { flattenPresetBody, mixedFields } from '../../src/presets/nested-body.js';

describe('nested preset body', () => {
  it('lifts metadata and configuration to the top level and drops the groups', () => {
    const body = { metadata: { name: 'n', tags: ['t'] }, configuration: { temperature: 0.2, system_prompt: null }, context: [], visibility: 'team' };
    expect(flattenPresetBody(body)).toEqual({ name: 'n', tags: ['t'], temperature: 0.2, system_prompt: null, context: [], visibility: 'team' });
    expect(flattenPresetBody({ name: 'flat', max_tokens: 5 })).toEqual({ name: 'flat', max_tokens: 5 });
    expect(flattenPresetBody({ name: 'n', metadata: { description: undefined } })).toEqual({ name: 'n' });
  });

  it('finds each field given in both forms, and only those', () => {
    expect(mixedFields({ name: 'a', temperature: 1, metadata: { name: 'b', tags: [] }, configuration: { temperature: null, max_tokens: 3 } })).toEqual([
      { group: 'metadata', field: 'name' },
      { group: 'configuration', field: 'temperature' },
    ]);
    expect(mixedFields({ name: 'a', configuration: { temperature: 1 } })).toEqual([]);
    // A field of the other group, or undefined on one side, is no mix.
    expect(mixedFields({ temperature: 1, metadata: { temperature: 2 } })).toEqual([]);
    expect(mixedFields({ name: undefined, metadata: { name: 'b' } })).toEqual([]);
  });
});

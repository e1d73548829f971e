/**
 * The spec's user-preset body nests fields: `{metadata: {name, description, avatar, tags,
 * category}, configuration: {model_preferences, temperature, max_tokens, system_prompt},
 * context}`. The create and update endpoints take it beside the flat form; both become the flat
 * form here. A field given in both forms is the caller's mistake, reported (a 400) rather than
 * one silently winning.
 */

/** Which group of the nested form holds each field. */
export const NESTED_PRESET_GROUPS = {
  metadata: ['name', 'description', 'avatar', 'tags', 'category'],
  configuration: ['model_preferences', 'temperature', 'max_tokens', 'system_prompt'],
} as const;

export type PresetGroup = keyof typeof NESTED_PRESET_GROUPS;
type GroupField<G extends PresetGroup> = (typeof NESTED_PRESET_GROUPS)[G][number];

/** A body in either form (or both, for different fields): only the nesting matters here. */
export type NestedPresetBody<Flat extends object> = Flat & { [G in PresetGroup]?: Partial<Pick<Flat, Extract<GroupField<G>, keyof Flat>>> };

/** A field given both at the top level and in its group. */
export interface MixedField {
  group: PresetGroup;
  field: string;
}

const GROUPS = Object.entries(NESTED_PRESET_GROUPS) as Array<[PresetGroup, readonly string[]]>;

/** Own, defined property: a parsed body's keys are the client's, never Object.prototype's. */
const given = (object: object | undefined, field: string): boolean => object !== undefined && Object.hasOwn(object, field) && (object as Record<string, unknown>)[field] !== undefined; // eslint-disable-line switchyard/no-string-index-lookup -- field is one of NESTED_PRESET_GROUPS'

export function mixedFields(body: object): MixedField[] {
  const mixed: MixedField[] = [];
  for (const [group, fields] of GROUPS) {
    const nested = (body as Partial<Record<PresetGroup, object>>)[group];
    for (const field of fields) if (given(nested, field) && given(body, field)) mixed.push({ group, field });
  }
  return mixed;
}

/** The flat form: each group's fields lifted to the top level, the groups gone. */
export function flattenPresetBody<Flat extends object>(body: NestedPresetBody<Flat>): Flat {
  const { metadata, configuration, ...flat } = body as Flat & Partial<Record<PresetGroup, object>>;
  for (const nested of [metadata, configuration]) {
    if (nested === undefined) continue;
    for (const [field, value] of Object.entries(nested)) if (value !== undefined) Object.assign(flat, { [field]: value });
  }
  return flat as Flat;
}

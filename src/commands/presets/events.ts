/**
 * Events of presets (conversation templates). Two aggregates:
 *
 * - `preset-<id>`: a user's preset, in the owner's tenant — PresetCreated, PresetUpdated (only the
 *   fields that changed), PresetDeleted.
 * - `builtinpresets-catalog` (tenant `_system`): the installation's built-in presets, loaded from
 *   the data files in presets/builtin — one BuiltinPresetPublished per built-in whose data-file
 *   version is newer than the one already published.
 *
 * Event schemas are deliberately looser than the commands (plain strings where commands take an
 * enum), so that history written under older rules always parses.
 */
import { z } from 'zod';

export const PresetMessageData = z.object({
  role: z.string(),
  content: z.string(),
  name: z.string().optional(),
});
export type PresetMessageData = z.infer<typeof PresetMessageData>;

/** Everything a preset says, as events carry it. */
export const PresetContentData = z.object({
  name: z.string(),
  description: z.string(),
  avatar: z.string(),
  tags: z.array(z.string()),
  category: z.string().nullable(),
  lang: z.string().nullable(),
  context: z.array(PresetMessageData),
  model_preferences: z.array(z.string()),
  temperature: z.number().nullable(),
  max_tokens: z.number().int().nullable(),
  system_prompt: z.string().nullable(),
});
export type PresetContentData = z.infer<typeof PresetContentData>;

export const PresetCreated = z.object({
  type: z.literal('PresetCreated'),
  data: PresetContentData.extend({
    preset_id: z.string(),
    owner_id: z.string(),
    visibility: z.string(),
    /** The preset (user or built-in) this one was cloned from. */
    cloned_from: z.string().nullable(),
  }),
});
export const PresetUpdated = z.object({
  type: z.literal('PresetUpdated'),
  data: PresetContentData.extend({ visibility: z.string() }).partial(),
});
export const PresetDeleted = z.object({ type: z.literal('PresetDeleted'), data: z.object({ by: z.string().nullable() }) });

export const PresetEvent = z.discriminatedUnion('type', [PresetCreated, PresetUpdated, PresetDeleted]);
export type PresetEvent = z.infer<typeof PresetEvent>;

export const BuiltinPresetPublished = z.object({
  type: z.literal('BuiltinPresetPublished'),
  data: PresetContentData.extend({
    preset_id: z.string(),
    /** The data file's version (numbers and dotted versions compare numerically, part by part). */
    version: z.string(),
  }),
});
export const BuiltinPresetEvent = z.discriminatedUnion('type', [BuiltinPresetPublished]);
export type BuiltinPresetEvent = z.infer<typeof BuiltinPresetEvent>;

export const PRESET_EVENT_TYPES = ['PresetCreated', 'PresetUpdated', 'PresetDeleted', 'BuiltinPresetPublished'] as const;

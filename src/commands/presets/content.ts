/**
 * What a preset may contain: the limits and the one normalisation + validation routine, shared by
 * the HTTP schemas (early 400s that name the field) and the decider (the final word).
 */
import { BadRequestError } from '../../errors.js';
import type { PresetContentData } from './events.js';

/** The categories of the preset catalogue (the built-in data uses exactly these spellings). */
export const PRESET_CATEGORIES = ['Business', 'Creative', 'Technical', 'Education', 'Healthcare', 'Legal', 'business', 'professional'] as const;
export type PresetCategory = (typeof PRESET_CATEGORIES)[number];

/** Roles a preset's context may use (tool messages need a conversation around them). */
export const PRESET_ROLES = ['system', 'developer', 'user', 'assistant'] as const;

export const PRESET_VISIBILITIES = ['private', 'team', 'public'] as const;
export type PresetVisibility = (typeof PRESET_VISIBILITIES)[number];

export const PRESET_LIMITS = {
  name: 200,
  description: 2_000,
  avatar: 2_048,
  tags: 20,
  tag: 50,
  /** Messages in a preset's context. */
  contextMessages: 100,
  /** Characters of the context's contents and the system prompt together. */
  contextChars: 100_000,
  modelPreferences: 10,
  model: 200,
  maxTokens: 1_000_000,
} as const;

/** A preset's content plus its visibility (built-ins have none: they are visible to everyone). */
export type PresetContent = PresetContentData & { visibility: PresetVisibility };

function invalid(message: string, code: string, param: string): never {
  throw new BadRequestError(message, code, param);
}

/**
 * Trims and de-duplicates what should be, then checks every limit. Throws a 400 (BadRequestError)
 * whose code and param say what is wrong: invalid_preset, unknown_category, invalid_role,
 * context_too_large.
 */
export function normalizeContent<T extends PresetContentData>(content: T): T {
  const name = content.name.trim();
  if (!name) invalid('a preset needs a name', 'invalid_preset', 'name');
  if (name.length > PRESET_LIMITS.name) invalid(`name is longer than ${PRESET_LIMITS.name} characters`, 'invalid_preset', 'name');
  if (content.description.length > PRESET_LIMITS.description) invalid(`description is longer than ${PRESET_LIMITS.description} characters`, 'invalid_preset', 'description');
  if (content.avatar.length > PRESET_LIMITS.avatar) invalid(`avatar is longer than ${PRESET_LIMITS.avatar} characters`, 'invalid_preset', 'avatar');
  if (content.category !== null && !(PRESET_CATEGORIES as readonly string[]).includes(content.category)) {
    invalid(`unknown category "${content.category}" (one of ${PRESET_CATEGORIES.join(', ')})`, 'unknown_category', 'category');
  }

  const tags: string[] = [];
  const seen = new Set<string>();
  for (const raw of content.tags) {
    const tag = raw.trim();
    if (!tag || tag.length > PRESET_LIMITS.tag) invalid(`tags must be 1 to ${PRESET_LIMITS.tag} characters`, 'invalid_preset', 'tags');
    if (seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    tags.push(tag);
  }
  if (tags.length > PRESET_LIMITS.tags) invalid(`at most ${PRESET_LIMITS.tags} tags`, 'invalid_preset', 'tags');

  if (content.context.length > PRESET_LIMITS.contextMessages) {
    invalid(`context has ${content.context.length} messages; at most ${PRESET_LIMITS.contextMessages}`, 'context_too_large', 'context');
  }
  let chars = content.system_prompt?.length ?? 0;
  content.context.forEach((m, i) => {
    if (!(PRESET_ROLES as readonly string[]).includes(m.role)) invalid(`context[${i}].role "${m.role}" is not one of ${PRESET_ROLES.join(', ')}`, 'invalid_role', `context.${i}.role`);
    if (!m.content.trim()) invalid(`context[${i}].content is empty`, 'invalid_preset', `context.${i}.content`);
    chars += m.content.length;
  });
  if (chars > PRESET_LIMITS.contextChars) invalid(`context and system prompt have ${chars} characters; at most ${PRESET_LIMITS.contextChars}`, 'context_too_large', 'context');

  const models = [...new Set(content.model_preferences.map((m) => m.trim()))];
  if (models.length > PRESET_LIMITS.modelPreferences || models.some((m) => !m || m.length > PRESET_LIMITS.model)) {
    invalid(`model_preferences: at most ${PRESET_LIMITS.modelPreferences} model names of 1 to ${PRESET_LIMITS.model} characters`, 'invalid_preset', 'model_preferences');
  }
  if (content.temperature !== null && !(content.temperature >= 0 && content.temperature <= 2)) invalid('temperature must be between 0 and 2', 'invalid_preset', 'temperature');
  if (content.max_tokens !== null && !(Number.isSafeInteger(content.max_tokens) && content.max_tokens >= 1 && content.max_tokens <= PRESET_LIMITS.maxTokens)) {
    invalid(`max_tokens must be an integer from 1 to ${PRESET_LIMITS.maxTokens}`, 'invalid_preset', 'max_tokens');
  }
  const visibility = (content as { visibility?: unknown }).visibility;
  if (visibility !== undefined && !(PRESET_VISIBILITIES as readonly unknown[]).includes(visibility)) {
    invalid(`visibility must be one of ${PRESET_VISIBILITIES.join(', ')}`, 'invalid_preset', 'visibility');
  }
  const systemPrompt = content.system_prompt === null || !content.system_prompt.trim() ? null : content.system_prompt;
  return { ...content, name, tags, model_preferences: models, system_prompt: systemPrompt };
}

/**
 * Orders built-in data versions: numbers, or dotted numbers ("1.2.10" > "1.2.9"); parts that are
 * not numbers compare as text. Negative: a < b.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = Number(x);
    const ny = Number(y);
    const diff = Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x.localeCompare(y);
    if (diff !== 0) return diff < 0 ? -1 : 1;
  }
  return 0;
}

/**
 * Presets without the page: the API's shape, the form's values and the body they become, the
 * avatar (an emoji, an emoji code such as "1f4ca" or "2709-fe0f", or an image URL), categories.
 * Pure: unit-tested in logic.test.ts.
 */

export type Visibility = 'private' | 'team' | 'public';
export const VISIBILITIES: readonly Visibility[] = ['private', 'team', 'public'];
export type Role = 'system' | 'developer' | 'user' | 'assistant';
export const ROLES: readonly Role[] = ['system', 'developer', 'user', 'assistant'];

/** The categories the API accepts (src/commands/presets/content.ts); the filter ignores case, so "business" covers both spellings. */
export const CATEGORIES = ['Business', 'Creative', 'Technical', 'Education', 'Healthcare', 'Legal', 'professional'] as const;
export type CategoryKey = 'business' | 'creative' | 'technical' | 'education' | 'healthcare' | 'legal' | 'professional';

/** A category as stored (any case) → the key of its translated label, or null for none / unknown. */
export function categoryKey(category: string | null): CategoryKey | null {
  const key = category?.toLowerCase();
  return CATEGORIES.some((c) => c.toLowerCase() === key) ? (key as CategoryKey) : null;
}

export interface PresetMessage {
  role: Role;
  content: string;
  name?: string;
}

/** A preset as the API answers it (src/api/routes/presets.ts PresetView). */
export interface Preset {
  id: string;
  builtin: boolean;
  owner_id: string | null;
  name: string;
  description: string;
  avatar: string;
  lang: string | null;
  category: string | null;
  tags: string[];
  context: PresetMessage[];
  public: boolean;
  visibility: Visibility;
  model_preferences: string[];
  temperature: number | null;
  max_tokens: number | null;
  system_prompt: string | null;
  version: string | null;
  revision: number;
  cloned_from: string | null;
  created_at: string;
  updated_at: string;
  score?: number | null;
}

export interface PresetPage {
  data: Preset[];
  total: number;
  next_offset: number | null;
}

export type Avatar = { kind: 'emoji'; text: string } | { kind: 'image'; url: string } | null;

/** What to draw for an avatar value. */
export function avatarOf(avatar: string): Avatar {
  const value = avatar.trim();
  if (!value) return null;
  if (/^https?:\/\//i.test(value) || value.startsWith('data:image/')) return { kind: 'image', url: value };
  if (/^[0-9a-f]{2,6}(-[0-9a-f]{2,6})*$/i.test(value)) {
    const points = value.split('-').map((h) => parseInt(h, 16));
    if (points.every((p) => p <= 0x10ffff)) return { kind: 'emoji', text: String.fromCodePoint(...points) };
  }
  // Already an emoji (or a short text): drawn as it is.
  return { kind: 'emoji', text: value };
}

export interface PresetForm {
  name: string;
  description: string;
  avatar: string;
  category: string;
  tags: string;
  lang: string;
  visibility: Visibility;
  systemPrompt: string;
  context: PresetMessage[];
  models: string;
  temperature: string;
  maxTokens: string;
}

export const EMPTY_PRESET: PresetForm = {
  name: '',
  description: '',
  avatar: '',
  category: '',
  tags: '',
  lang: '',
  visibility: 'private',
  systemPrompt: '',
  context: [],
  models: '',
  temperature: '',
  maxTokens: '',
};

/** Tags typed as text: commas (or new lines) separate them; blanks and repeats (any case) dropped. */
export function parseTags(text: string): string[] {
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const raw of text.split(/[,，\n]/)) {
    const tag = raw.trim();
    if (!tag || seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    tags.push(tag);
  }
  return tags;
}

const parseModels = (text: string) => [...new Set(text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean))];

export interface PresetProblem {
  field: 'name' | 'temperature' | 'maxTokens' | 'context';
  problem: 'required' | 'notTemperature' | 'notMaxTokens' | 'emptyMessage';
  value?: string;
}

/** The create / PATCH body (every field, so a PATCH replaces them all), or what is wrong. */
export function presetBody(form: PresetForm): { body: Record<string, unknown>; problems: [] } | { body: null; problems: PresetProblem[] } {
  const problems: PresetProblem[] = [];
  if (!form.name.trim()) problems.push({ field: 'name', problem: 'required' });
  const temperature = form.temperature.trim();
  const t = Number(temperature);
  if (temperature && !(Number.isFinite(t) && t >= 0 && t <= 2)) problems.push({ field: 'temperature', problem: 'notTemperature', value: temperature });
  const maxTokens = form.maxTokens.trim();
  if (maxTokens && !(/^\d+$/.test(maxTokens) && Number(maxTokens) >= 1 && Number(maxTokens) <= 1_000_000)) problems.push({ field: 'maxTokens', problem: 'notMaxTokens', value: maxTokens });
  if (form.context.some((m) => !m.content.trim())) problems.push({ field: 'context', problem: 'emptyMessage' });
  if (problems.length > 0) return { body: null, problems };
  return {
    problems: [],
    body: {
      name: form.name.trim(),
      description: form.description.trim(),
      avatar: form.avatar.trim(),
      category: form.category || null,
      tags: parseTags(form.tags),
      lang: form.lang.trim() || null,
      visibility: form.visibility,
      system_prompt: form.systemPrompt.trim() ? form.systemPrompt : null,
      context: form.context.map((m) => ({ role: m.role, content: m.content, ...(m.name ? { name: m.name } : {}) })),
      model_preferences: parseModels(form.models),
      temperature: temperature ? t : null,
      max_tokens: maxTokens ? Number(maxTokens) : null,
    },
  };
}

/** A preset as form values (editing). */
export function presetForm(preset: Preset): PresetForm {
  return {
    name: preset.name,
    description: preset.description,
    avatar: preset.avatar,
    category: preset.category ?? '',
    tags: preset.tags.join(', '),
    lang: preset.lang ?? '',
    visibility: preset.visibility,
    systemPrompt: preset.system_prompt ?? '',
    context: preset.context.map((m) => ({ ...m })),
    models: preset.model_preferences.join(', '),
    temperature: preset.temperature === null ? '' : String(preset.temperature),
    maxTokens: preset.max_tokens === null ? '' : String(preset.max_tokens),
  };
}

export type Scope = 'all' | 'builtin' | 'mine' | 'shared';

export interface GalleryFilter {
  q: string;
  scope: Scope;
  category: string;
  tags: string[];
}

/** The search query of a gallery filter (empty values left out). */
export function searchQuery(filter: GalleryFilter, offset = 0, limit = 24): Record<string, string | number> {
  const query: Record<string, string | number> = { scope: filter.scope, limit, offset };
  if (filter.q.trim()) query.q = filter.q.trim();
  if (filter.category) query.category = filter.category;
  if (filter.tags.length) query.tags = filter.tags.join(',');
  return query;
}

/** Tags of the presets shown, most used first (ties by name): the tag filter's choices. */
export function topTags(presets: readonly Pick<Preset, 'tags'>[], max = 16): string[] {
  const counts = new Map<string, { tag: string; n: number }>();
  for (const p of presets) {
    for (const tag of p.tags) {
      const key = tag.toLowerCase();
      const entry = counts.get(key);
      if (entry) entry.n++;
      else counts.set(key, { tag, n: 1 });
    }
  }
  return [...counts.values()]
    .sort((a, b) => b.n - a.n || a.tag.localeCompare(b.tag))
    .slice(0, max)
    .map((e) => e.tag);
}

/** The system prompt to show: the preset's own, else its context's system messages. */
export function systemPromptOf(preset: Pick<Preset, 'system_prompt' | 'context'>): string | null {
  if (preset.system_prompt) return preset.system_prompt;
  const system = preset.context.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content);
  return system.length ? system.join('\n\n') : null;
}

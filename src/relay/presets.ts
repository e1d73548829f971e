/**
 * Applying a preset to a relay request (`preset_id`, a Switchyard extension). Pure: the route
 * looks the preset up (visibility-checked) and hands it here before the body is validated.
 *
 * - `messages`: the preset's `system_prompt` (as a system message, only when the request has no
 *   system/developer message of its own), then the preset's `context`, then the request's messages.
 * - `model`: the request's, when it names one. Otherwise the first of the preset's
 *   `model_preferences` the caller can use (served by its channels, allowed by its key), else the
 *   first preference (routing then answers as for any unavailable model).
 * - `temperature`, `max_tokens`: the preset's, when the request sets none (`max_tokens` also
 *   stays unset when the request gives `max_completion_tokens`).
 * - `preset_id` itself is removed: it never reaches an upstream.
 */

export interface RelayPreset {
  context: ReadonlyArray<{ role: string; content: string; name?: string }>;
  model_preferences: readonly string[];
  temperature: number | null;
  max_tokens: number | null;
  system_prompt: string | null;
}

const unset = (v: unknown) => v === undefined || v === null;

export function applyPreset(body: Record<string, unknown>, preset: RelayPreset, usable: (model: string) => boolean): Record<string, unknown> {
  const { preset_id: _presetId, ...out } = body;
  if (unset(out.model) || out.model === '') {
    const model = preset.model_preferences.find(usable) ?? preset.model_preferences[0];
    if (model !== undefined) out.model = model;
  }
  if (unset(out.temperature) && preset.temperature !== null) out.temperature = preset.temperature;
  if (unset(out.max_tokens) && unset(out.max_completion_tokens) && preset.max_tokens !== null) out.max_tokens = preset.max_tokens;
  if (Array.isArray(out.messages)) {
    const own = out.messages as unknown[];
    const hasSystem = own.some((m) => typeof m === 'object' && m !== null && ((m as { role?: unknown }).role === 'system' || (m as { role?: unknown }).role === 'developer'));
    const prefix: unknown[] = [];
    if (preset.system_prompt && !hasSystem) prefix.push({ role: 'system', content: preset.system_prompt });
    for (const m of preset.context) prefix.push(m.name === undefined ? { role: m.role, content: m.content } : { role: m.role, content: m.content, name: m.name });
    out.messages = [...prefix, ...own];
  }
  return out;
}

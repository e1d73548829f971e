/** The settings form of a conversation: its text fields, and the API body they make. */
import type { Conversation } from './types';

export interface SettingsValue {
  /** '' = the user's default. */
  model: string;
  presetId: string | null;
  temperature: string;
  maxTokens: string;
  systemPrompt: string;
}

export const EMPTY_SETTINGS: SettingsValue = { model: '', presetId: null, temperature: '', maxTokens: '', systemPrompt: '' };

export function settingsOf(c: Pick<Conversation, 'model' | 'preset_id' | 'temperature' | 'max_tokens' | 'system_prompt'>): SettingsValue {
  return {
    model: c.model ?? '',
    presetId: c.preset_id,
    temperature: c.temperature === null ? '' : String(c.temperature),
    maxTokens: c.max_tokens === null ? '' : String(c.max_tokens),
    systemPrompt: c.system_prompt ?? '',
  };
}

/** Blank fields are null (the user's default). Numbers go as typed: the server judges them. */
export function settingsBody(v: SettingsValue) {
  const number = (text: string) => (text.trim() === '' ? null : Number(text));
  return {
    model: v.model.trim() || null,
    preset_id: v.presetId,
    temperature: number(v.temperature),
    max_tokens: number(v.maxTokens),
    system_prompt: v.systemPrompt === '' ? null : v.systemPrompt,
  };
}

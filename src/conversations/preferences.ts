/**
 * A user's chat preferences: the known keys of the free-form preferences document
 * (`PATCH /v1/users/me`) that fill in what a conversation does not set. Pure: the schema the
 * route validates with, and the effective defaults other code reads (`chatDefaults`).
 */
import { z } from 'zod';
import { ownValue } from '../own.js';

/** Largest `max_tokens` a user may prefer (a cap on typos, well above any model's output limit today). */
export const MAX_PREFERRED_MAX_TOKENS = 1_000_000;

export const Theme = z.enum(['light', 'dark', 'system']);
export type Theme = z.infer<typeof Theme>;

/** Whether `tag` is a well-formed BCP 47 language tag (the platform's own parser decides). */
export function isLanguageTag(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

export const LanguageTag = z
  .string()
  .min(2)
  .max(64)
  .refine(isLanguageTag, 'must be a BCP 47 language tag such as "en" or "pt-BR"')
  .describe('BCP 47 language tag');

/** The known keys, each with its own rule (other keys of the document stay free-form). */
export const ChatPreferenceFields = {
  theme: Theme,
  language: LanguageTag,
  default_model: z.string().trim().min(1).max(256).describe('model used when a conversation names none'),
  temperature: z.number().min(0).max(2),
  max_tokens: z.number().int().positive().max(MAX_PREFERRED_MAX_TOKENS),
} as const;

export const ChatPreferences = z.object(ChatPreferenceFields).partial();
export type ChatPreferences = z.infer<typeof ChatPreferences>;

/** What a user gets for a key they did not set (or set before it was validated to something invalid). */
export const CHAT_DEFAULTS = { theme: 'system', language: 'en', default_model: null, temperature: 0.7, max_tokens: 2048 } as const;

export const ChatDefaults = z
  .object({
    theme: Theme,
    language: z.string(),
    default_model: z.string().nullable(),
    temperature: z.number(),
    max_tokens: z.number().int(),
  })
  .describe('the chat preferences in effect: the stored ones, defaults for the rest');
export type ChatDefaults = z.infer<typeof ChatDefaults>;

/** One known key's stored value when it is valid, else the default. */
function preferred<K extends keyof typeof ChatPreferenceFields>(preferences: Readonly<Record<string, unknown>>, key: K): z.infer<(typeof ChatPreferenceFields)[K]> | undefined {
  const parsed = ChatPreferenceFields[key].safeParse(ownValue(preferences, key));
  return parsed.success ? (parsed.data as z.infer<(typeof ChatPreferenceFields)[K]>) : undefined;
}

/**
 * The chat settings in effect for a user with these stored preferences. Tolerant: a value stored
 * before the keys were validated, and is not valid, counts as unset.
 */
export function chatDefaults(preferences: Readonly<Record<string, unknown>>): ChatDefaults {
  return {
    theme: preferred(preferences, 'theme') ?? CHAT_DEFAULTS.theme,
    language: preferred(preferences, 'language') ?? CHAT_DEFAULTS.language,
    default_model: preferred(preferences, 'default_model') ?? CHAT_DEFAULTS.default_model,
    temperature: preferred(preferences, 'temperature') ?? CHAT_DEFAULTS.temperature,
    max_tokens: preferred(preferences, 'max_tokens') ?? CHAT_DEFAULTS.max_tokens,
  };
}

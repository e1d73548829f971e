/** The chat-defaults form as a preferences patch (PATCH /v1/users/me): empty fields remove the key. */
export interface ChatDefaultsForm {
  default_model: string;
  temperature: string;
  max_tokens: string;
}

/**
 * A field left empty is sent as null (the server then uses its default); numbers as numbers. Text
 * that is no number is sent as it is, for the server to refuse with its message (NaN would become
 * null in JSON and quietly remove the key).
 */
export function preferencesPatch(form: ChatDefaultsForm): { default_model: string | null; temperature: number | string | null; max_tokens: number | string | null } {
  const num = (text: string) => {
    const trimmed = text.trim();
    if (trimmed === '') return null;
    const n = Number(trimmed);
    return Number.isFinite(n) ? n : trimmed;
  };
  return { default_model: form.default_model.trim() || null, temperature: num(form.temperature), max_tokens: num(form.max_tokens) };
}

/** The form's starting values from the stored preferences (not the defaults: an unset key stays empty). */
export function formOf(preferences: Record<string, unknown>): ChatDefaultsForm {
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  return { default_model: text(preferences.default_model), temperature: text(preferences.temperature), max_tokens: text(preferences.max_tokens) };
}

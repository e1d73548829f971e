/**
 * Translations: the UI speaks `en` and `cn`. Each area keeps its own messages next to its pages
 * (defineMessages: both languages, same keys, checked by the compiler); `{name}` in a message is
 * replaced by the value given for it.
 */
export type Lang = 'en' | 'cn';
export const LANGS: readonly Lang[] = ['en', 'cn'];

/** The `language` preference stored for each UI language (a BCP 47 tag, as the API validates it). */
export const LANGUAGE_TAG: Record<Lang, string> = { en: 'en', cn: 'zh-CN' };

/** The UI language for a stored preference or a browser language: Chinese tags (and "cn") -> cn. */
export function langOf(tag: string | null | undefined): Lang {
  if (!tag) return 'en';
  const t = tag.toLowerCase();
  return t === 'cn' || t === 'zh' || t.startsWith('zh-') ? 'cn' : 'en';
}

export interface Messages<K extends string> {
  en: Record<K, string>;
  cn: Record<K, string>;
}

export function defineMessages<const E extends Record<string, string>>(messages: { en: E; cn: { [K in keyof E]: string } }): Messages<Extract<keyof E, string>> {
  return messages as Messages<Extract<keyof E, string>>;
}

export type Vars = Record<string, string | number>;

export function format(template: string, vars?: Vars): string {
  if (!vars) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(vars, name) ? String(vars[name]) : whole));
}

export function translator<K extends string>(messages: Messages<K>, lang: Lang): (key: K, vars?: Vars) => string {
  const table = messages[lang];
  return (key, vars) => format(table[key] ?? messages.en[key] ?? key, vars);
}

/** Numbers, money and dates in the UI language's conventions. */
export function localeOf(lang: Lang): string {
  return lang === 'cn' ? 'zh-CN' : 'en-US';
}

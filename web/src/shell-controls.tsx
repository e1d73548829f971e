/** The language and theme switches (the top bar, and the login page before anyone is signed in). */
import { common } from './i18n/common';
import { useLang, useT } from './i18n/context';
import { LANGS, type Lang } from './i18n/core';
import type { Theme } from './api/types';
import { useTheme } from './theme-context';

const LANG_NAMES: Record<Lang, string> = { en: 'English', cn: '中文' };

export function ShellControls() {
  const t = useT(common);
  const { lang, setLang } = useLang();
  const { theme, setTheme } = useTheme();
  return (
    <div className="shell-controls">
      <label>
        <span className="sr-only">{t('language')}</span>
        <select aria-label={t('language')} value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
          {LANGS.map((l) => (
            <option key={l} value={l}>
              {LANG_NAMES[l]}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="sr-only">{t('theme')}</span>
        <select aria-label={t('theme')} value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
          <option value="light">{t('themeLight')}</option>
          <option value="dark">{t('themeDark')}</option>
          <option value="system">{t('themeSystem')}</option>
        </select>
      </label>
    </div>
  );
}

import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { localeOf, translator, type Lang, type Messages, type Vars } from './core';

interface I18nState {
  lang: Lang;
  setLang(lang: Lang): void;
}

const I18nContext = createContext<I18nState>({ lang: 'en', setLang: () => {} });

export function I18nProvider({ lang, setLang, children }: I18nState & { children: ReactNode }) {
  const value = useMemo(() => ({ lang, setLang }), [lang, setLang]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useLang(): I18nState {
  return useContext(I18nContext);
}

/** `t(key, vars)` for an area's messages in the current language. */
export function useT<K extends string>(messages: Messages<K>): (key: K, vars?: Vars) => string {
  const { lang } = useLang();
  return useMemo(() => translator(messages, lang), [messages, lang]);
}

/** Formatters in the current language. */
export function useFormat() {
  const { lang } = useLang();
  return useMemo(() => {
    const locale = localeOf(lang);
    const number = new Intl.NumberFormat(locale);
    const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
    return {
      number: (n: number) => number.format(n),
      money: (amount: number, currency = 'USD') => new Intl.NumberFormat(locale, { style: 'currency', currency, maximumFractionDigits: 6 }).format(amount),
      dateTime: (at: string | number | Date) => dateTime.format(typeof at === 'object' ? at : new Date(typeof at === 'number' && at < 1e12 ? at * 1000 : at)),
    };
  }, [lang]);
}

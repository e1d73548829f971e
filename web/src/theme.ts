/** Light, dark or the system's choice: set as data-theme on <html>, which the stylesheet reads. */
import type { Theme } from './api/types';

export function resolvedTheme(theme: Theme, prefersDark: boolean): 'light' | 'dark' {
  return theme === 'system' ? (prefersDark ? 'dark' : 'light') : theme;
}

const query = () => window.matchMedia('(prefers-color-scheme: dark)');

/** Applies a theme now and follows the system while it is `system`; answers the stop function. */
export function applyTheme(theme: Theme): () => void {
  const set = () => {
    document.documentElement.dataset.theme = resolvedTheme(theme, query().matches);
  };
  set();
  if (theme !== 'system') return () => {};
  const media = query();
  media.addEventListener('change', set);
  return () => media.removeEventListener('change', set);
}

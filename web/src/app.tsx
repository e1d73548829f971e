/**
 * The shell: the session, language and theme, the navigation, and the area pages (ROUTES). Not
 * signed in: the login page, whatever the path.
 */
import { Suspense, useCallback, useEffect, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import type { Theme } from './api/types';
import { common } from './i18n/common';
import { I18nProvider, useT } from './i18n/context';
import { LANGUAGE_TAG, langOf, type Lang } from './i18n/core';
import { LoginPage } from './pages/login';
import { ROUTES } from './routes';
import { SessionProvider, useSession } from './session';
import { ShellControls } from './shell-controls';
import { applyTheme } from './theme';
import { ThemeContext } from './theme-context';
import { Loading } from './ui/kit';

const stored = (key: string): string | null => {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
};
const store = (key: string, value: string) => {
  try {
    localStorage.setItem(key, value);
  } catch {
    // private mode: the choice lasts for this page only
  }
};

function Preferences({ children }: { children: React.ReactNode }) {
  const { me, savePreferences } = useSession();
  const [lang, setLangState] = useState<Lang>(() => langOf(stored('sy.lang') ?? navigator.language));
  const [theme, setThemeState] = useState<Theme>(() => (stored('sy.theme') as Theme | null) ?? 'system');

  // Signed in: the account's preferences win over this browser's.
  useEffect(() => {
    if (!me) return;
    const language = me.preferences.language;
    if (typeof language === 'string') setLangState(langOf(language));
    const t = me.preferences.theme;
    if (t === 'light' || t === 'dark' || t === 'system') setThemeState(t);
  }, [me]);

  useEffect(() => {
    document.documentElement.lang = lang === 'cn' ? 'zh-CN' : 'en';
  }, [lang]);
  useEffect(() => applyTheme(theme), [theme]);

  const setLang = useCallback(
    (next: Lang) => {
      setLangState(next);
      store('sy.lang', next);
      if (me) void savePreferences({ language: LANGUAGE_TAG[next] }).catch(() => {});
    },
    [me, savePreferences],
  );
  const setTheme = useCallback(
    (next: Theme) => {
      setThemeState(next);
      store('sy.theme', next);
      if (me) void savePreferences({ theme: next }).catch(() => {});
    },
    [me, savePreferences],
  );

  return (
    <I18nProvider lang={lang} setLang={setLang}>
      <ThemeContext.Provider value={{ theme, setTheme }}>{children}</ThemeContext.Provider>
    </I18nProvider>
  );
}

function Shell() {
  const t = useT(common);
  const { me, logout } = useSession();
  const [location] = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [location]);
  if (!me) return null;
  const isAdmin = me.role === 'admin';
  const userRoutes = ROUTES.filter((r) => !r.admin);
  const adminRoutes = ROUTES.filter((r) => r.admin);
  const link = (r: (typeof ROUTES)[number]) => (
    <li key={r.path}>
      <Link href={r.path} className={location === r.path || location.startsWith(`${r.path}/`) ? 'active' : ''} aria-current={location.startsWith(r.path) ? 'page' : undefined}>
        {t(r.label)}
      </Link>
    </li>
  );
  return (
    <div className={menuOpen ? 'shell menu-open' : 'shell'}>
      <header className="topbar">
        <button type="button" className="icon menu-button" aria-label={t('menu')} aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}>
          ☰
        </button>
        <Link href="/chat" className="brand">
          {t('appName')}
        </Link>
        <div className="spacer" />
        <ShellControls />
        <span className="muted user-email">{me.email}</span>
        <button type="button" className="secondary" onClick={() => void logout()}>
          {t('logout')}
        </button>
      </header>
      <nav className="sidebar" aria-label={t('menu')}>
        <ul>{userRoutes.map(link)}</ul>
        {isAdmin ? (
          <>
            <h2 className="nav-heading">{t('navAdmin')}</h2>
            <ul>{adminRoutes.map(link)}</ul>
          </>
        ) : null}
      </nav>
      <main className="content">
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/">
              <Redirect to="/chat" replace />
            </Route>
            <Route path="/admin">
              <Redirect to="/admin/dashboard" replace />
            </Route>
            {ROUTES.map((r) => (
              <Route key={r.path} path={r.path} nest>
                {r.admin && !isAdmin ? <p className="error-note">{t('forbidden')}</p> : <r.component />}
              </Route>
            ))}
            <Route>
              <p className="muted">{t('notFound')}</p>
            </Route>
          </Switch>
        </Suspense>
      </main>
    </div>
  );
}

/**
 * The server is in maintenance for this visitor: its message, a way to look again, and the login
 * (admins still work during maintenance, so they must be able to sign in).
 */
function MaintenancePage({ message }: { message: string }) {
  const t = useT(common);
  const { reload } = useSession();
  return (
    <>
      <div className="error-note" role="alert" style={{ margin: '1rem' }}>
        <strong>{t('maintenance', { message })}</strong>
        <button type="button" className="link" onClick={() => void reload()}>
          {t('retry')}
        </button>
      </div>
      <LoginPage />
    </>
  );
}

function Gate() {
  const { me, loading, maintenance } = useSession();
  if (loading) return <Loading />;
  if (maintenance !== null) return <MaintenancePage message={maintenance} />;
  return me ? <Shell /> : <LoginPage />;
}

export function App() {
  return (
    <SessionProvider>
      <Preferences>
        <Gate />
      </Preferences>
    </SessionProvider>
  );
}

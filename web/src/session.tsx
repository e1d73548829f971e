/**
 * Who is signed in: the /v1/users/me answer, or null. Login (with the MFA step), logout, and the
 * preferences the shell follows (language, theme) live here.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, ApiError, setSessionLostHandler } from './api/client';
import type { Me, Theme } from './api/types';

export type LoginResult = { ok: true } | { ok: false; mfaRequired: boolean; message: string };

interface SessionState {
  me: Me | null;
  /** True until the first /v1/users/me answer. */
  loading: boolean;
  /** The maintenance message while the server refuses this user (503 maintenance), else null. */
  maintenance: string | null;
  login(email: string, password: string, mfaCode?: string): Promise<LoginResult>;
  logout(): Promise<void>;
  /** Merges preferences (null removes a key) and keeps the answer. */
  savePreferences(preferences: Record<string, unknown>): Promise<void>;
  reload(): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [loading, setLoading] = useState(true);
  const [maintenance, setMaintenance] = useState<string | null>(null);

  const reload = useCallback(async () => {
    try {
      setMe(await api<Me>('/v1/users/me'));
      setMaintenance(null);
    } catch (error) {
      const down = error instanceof ApiError && error.status === 503 && error.code === 'maintenance';
      if (!(error instanceof ApiError) || (error.status !== 401 && !down)) console.error(error);
      setMaintenance(down ? error.message : null);
      setMe(null);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    setSessionLostHandler(() => setMe(null));
    void reload();
  }, [reload]);

  const login = useCallback(
    async (email: string, password: string, mfaCode?: string): Promise<LoginResult> => {
      try {
        await api('/v1/auth/login', { body: { email, password, ...(mfaCode ? { mfa_code: mfaCode } : {}) }, noRefresh: true });
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, mfaRequired: error.code === 'mfa_required', message: error.message };
        return { ok: false, mfaRequired: false, message: String(error) };
      }
      await reload();
      return { ok: true };
    },
    [reload],
  );

  const logout = useCallback(async () => {
    try {
      await api('/v1/auth/logout', { method: 'POST', noRefresh: true });
    } finally {
      setMe(null);
    }
  }, []);

  const savePreferences = useCallback(async (preferences: Record<string, unknown>) => {
    setMe(await api<Me>('/v1/users/me', { method: 'PATCH', body: { preferences } }));
  }, []);

  const value = useMemo(() => ({ me, loading, maintenance, login, logout, savePreferences, reload }), [me, loading, maintenance, login, logout, savePreferences, reload]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** The signed-in user (pages behind the login only). */
export function useMe(): Me {
  const { me } = useSession();
  if (!me) throw new Error('useMe without a session');
  return me;
}

export const themeOf = (me: Me | null): Theme => me?.chat_defaults.theme ?? 'system';

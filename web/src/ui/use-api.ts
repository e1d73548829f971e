/** Loading data for a page: the answer, the error, and reload — refetched when `key` changes. */
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, type RequestOptions } from '../api/client';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
  reload(): Promise<void>;
  /** Replace the data without a request (after a write that answered the new state). */
  set(data: T): void;
}

/** GET `path` (null: nothing to load yet). */
export function useApi<T>(path: string | null, query?: RequestOptions['query']): Loaded<T> {
  const key = path === null ? null : JSON.stringify([path, query ?? null]);
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(path !== null);
  const latest = useRef(0);
  const args = useRef({ path, query });
  args.current = { path, query };

  const reload = useCallback(async () => {
    const { path: p, query: q } = args.current;
    if (p === null) return;
    const ticket = ++latest.current;
    setLoading(true);
    try {
      const answer = await api<T>(p, { query: q });
      if (ticket === latest.current) {
        setData(answer);
        setError(null);
      }
    } catch (e) {
      if (ticket === latest.current) setError(e as Error);
    } finally {
      if (ticket === latest.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [key, reload]);

  return { data, error, loading, reload, set: setData };
}

/** Runs a write with a busy flag and its error kept for the form. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action(...args);
      } catch (e) {
        setError(e as Error);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, setError };
}

/**
 * Staying in sync with the user's other devices: GET /v1/conversations/sync is polled (it answers
 * the changes after a cursor at once, it does not hold the request); each change bumps `tick` and
 * names the conversations that changed, so the list and the open conversation reload.
 */
import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { api } from '../../api/client';
import type { SyncAnswer } from './types';

export const SYNC_INTERVAL_MS = 1500;

export interface ChatSync {
  tick: number;
  /** The conversations of the last change (reload them). */
  changed: ReadonlySet<string>;
  /** A change made here (the list reloads at once, without waiting for the next poll). */
  bump(): void;
}

export const ChatSyncContext = createContext<ChatSync>({ tick: 0, changed: new Set(), bump: () => {} });
export const useChatSync = () => useContext(ChatSyncContext);

export function useSyncLoop(): ChatSync {
  const [state, setState] = useState<{ tick: number; changed: ReadonlySet<string> }>({ tick: 0, changed: new Set() });
  const cursor = useRef<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let asking = false;
    const poll = async () => {
      let again = false;
      // A hidden tab asks nothing; it catches up as soon as it is shown again (below).
      if (document.visibilityState === 'hidden') {
        timer = setTimeout(() => void poll(), SYNC_INTERVAL_MS);
        return;
      }
      asking = true;
      try {
        const first = cursor.current === undefined;
        const answer = await api<SyncAnswer>('/v1/conversations/sync', { query: { since: cursor.current, limit: 500 } });
        if (!live) return;
        cursor.current = answer.cursor;
        again = answer.has_more;
        // The first (full) sync only sets the cursor: the page loaded what it shows already.
        if (!first && answer.changes.length > 0) setState((s) => ({ tick: s.tick + 1, changed: new Set(answer.changes.map((c) => c.id)) }));
      } catch {
        // offline or signed out: try again later
      }
      asking = false;
      if (live) timer = setTimeout(() => void poll(), again ? 0 : SYNC_INTERVAL_MS);
    };
    const shown = () => {
      // One loop only: a request under way schedules the next itself.
      if (document.visibilityState !== 'visible' || asking) return;
      clearTimeout(timer);
      void poll();
    };
    document.addEventListener('visibilitychange', shown);
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, []);
  const bump = useCallback(() => setState((s) => ({ tick: s.tick + 1, changed: new Set() })), []);
  return { ...state, bump };
}

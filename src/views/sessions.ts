/**
 * The active-sessions live view that every authenticated request is checked against, seeded from
 * the sessions read model (src/projections/sessions.ts).
 */
import { SessionEvent } from '../commands/sessions/events.js';
import { sessionIdOfStream, sessionsProjection } from '../projections/sessions.js';
import type { LiveViewDefinition } from '../projections/runtime/live-view.js';

/** A session that has not ended yet; it authenticates unless revoked. */
export interface LiveSession {
  userId: string;
  /** Epoch ms: the session's end (its refresh token expiry; a CLI session's token lifetime). */
  expiresAt: number;
  /** Revoked sessions stay until their end, so their tokens are refused without a second look. */
  revoked: boolean;
}

/** Session id -> the session, for every session not past its end (the live view `sessions`). */
export type ActiveSessions = Map<string, LiveSession>;

/** The session `sessionId` of `userId` if it is active (not revoked, not ended) at `now`, else undefined. */
export function activeSession(sessions: ActiveSessions, sessionId: string, userId: string, now = Date.now()): LiveSession | undefined {
  const session = sessions.get(sessionId);
  return session && !session.revoked && session.userId === userId && session.expiresAt > now ? session : undefined;
}

/**
 * Every session not past its end, in memory on every instance: an access token is honoured only
 * while its session is here and not revoked, so logout (and a detected refresh-token reuse, and a
 * password change) ends the session's access tokens everywhere at once, and a token naming a
 * session that never existed is refused. Bounded by the sessions alive at once (one entry per
 * login within JWT_REFRESH_EXPIRE); ended sessions are dropped (pruned at most once a minute).
 */
export function activeSessionsView(): LiveViewDefinition<ActiveSessions> {
  let nextPrune = 0;
  return {
    projection: sessionsProjection,
    snapshot: { version: 1 },
    async load(db) {
      const now = new Date().toISOString();
      const rows = await db.selectFrom('sessions').select(['id', 'user_id', 'expires_at', 'revoked']).where('expires_at', '>', now).execute();
      return new Map(rows.map((r) => [r.id, { userId: r.user_id, expiresAt: Date.parse(r.expires_at), revoked: r.revoked === 1 }]));
    },
    evolve(sessions, stored) {
      const id = sessionIdOfStream(stored.stream);
      const event = SessionEvent.parse({ type: stored.type, data: stored.data });
      switch (event.type) {
        case 'SessionStarted':
          sessions.set(id, { userId: event.data.user_id, expiresAt: Date.parse(event.data.expires_at), revoked: false });
          break;
        case 'SessionRefreshed': {
          const session = sessions.get(id);
          if (session) session.expiresAt = Date.parse(event.data.expires_at);
          break;
        }
        case 'SessionRevoked': {
          const session = sessions.get(id);
          if (session) session.revoked = true;
          break;
        }
      }
      const now = Date.now();
      if (now >= nextPrune) {
        nextPrune = now + 60_000;
        for (const [sid, session] of sessions) if (session.expiresAt <= now) sessions.delete(sid);
      }
      return sessions;
    },
  };
}

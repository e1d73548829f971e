/**
 * Sessions read model (`sessions`, one row per login or CLI-minted token), read by refresh and
 * logout, and the active-sessions live view that every authenticated request is checked against.
 */
import { SESSION_EVENT_TYPES, SessionEvent } from '../commands/sessions/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { LiveViewDefinition } from './runtime/live-view.js';
import type { Projection } from './runtime/projection.js';

export const sessionIdOfStream = (stream: string) => stream.slice('session-'.length);

function parse(stored: StoredEvent): SessionEvent {
  return SessionEvent.parse({ type: stored.type, data: stored.data });
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  version: 1,
  eventTypes: SESSION_EVENT_TYPES,
  async apply(trx, stored) {
    const id = sessionIdOfStream(stored.stream);
    const event = parse(stored);
    const at = stored.occurred_at;
    switch (event.type) {
      case 'SessionStarted':
        await trx
          .insertInto('sessions')
          .values({
            id,
            tenant_id: stored.tenant_id,
            user_id: event.data.user_id,
            refresh_token_hash: event.data.refresh_token_hash,
            expires_at: event.data.expires_at,
            revoked: 0,
            revoked_at: null,
            revoke_reason: null,
            user_agent: event.data.user_agent?.slice(0, 255) ?? null,
            ip: event.data.ip?.slice(0, 64) ?? null,
            created_at: at,
            refreshed_at: null,
          })
          .execute();
        return;
      case 'SessionRefreshed':
        await trx.updateTable('sessions').set({ refresh_token_hash: event.data.refresh_token_hash, expires_at: event.data.expires_at, refreshed_at: at }).where('id', '=', id).execute();
        return;
      case 'SessionRevoked':
        await trx.updateTable('sessions').set({ revoked: 1, revoked_at: at, revoke_reason: event.data.reason }).where('id', '=', id).execute();
        return;
    }
  },
  async reset(trx) {
    await trx.deleteFrom('sessions').execute();
  },
};

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
      const event = parse(stored);
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

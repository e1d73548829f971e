/**
 * Sessions read model (`sessions`, one row per login), read by refresh and logout, and the
 * revoked-sessions live view: sessions revoked recently enough that an access token issued for
 * them may still be unexpired. Checking it in memory makes logout (and a detected refresh-token
 * reuse) end the session's access tokens on every instance at once.
 */
import { SESSION_EVENT_TYPES, SessionEvent } from '../commands/sessions/events.js';
import type { StoredEvent } from '../ports/event-store.js';
import type { LiveViewDefinition } from './runtime/live-view.js';
import type { Projection, ReadModelDb } from './runtime/projection.js';

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

/** Revoked session id -> epoch ms until which tokens of it could still be unexpired. */
export type RevokedSessions = Map<string, number>;

export function isRevoked(revoked: RevokedSessions, sessionId: string, now = Date.now()): boolean {
  const until = revoked.get(sessionId);
  return until !== undefined && until > now;
}

/** Active sessions of a user (for "revoke the others" after a password change). */
export async function activeSessionIds(db: ReadModelDb, tenantId: string, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('sessions').select('id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('revoked', '=', 0).execute();
  return rows.map((r) => r.id);
}

/** `accessTtlMs`: the longest an access token lives (JWT_EXPIRE); older revocations are moot. */
export function revokedSessionsView(accessTtlMs: number): LiveViewDefinition<RevokedSessions> {
  let nextPrune = 0;
  return {
    projection: sessionsProjection,
    async load(db) {
      const since = new Date(Date.now() - accessTtlMs).toISOString();
      const rows = await db.selectFrom('sessions').select(['id', 'revoked_at']).where('revoked', '=', 1).where('revoked_at', '>', since).execute();
      return new Map(rows.map((r) => [r.id, Date.parse(r.revoked_at!) + accessTtlMs]));
    },
    evolve(revoked, stored) {
      if (stored.type !== 'SessionRevoked') return revoked;
      const now = Date.now();
      revoked.set(sessionIdOfStream(stored.stream), Math.max(now, Date.parse(stored.occurred_at)) + accessTtlMs);
      if (now >= nextPrune) {
        nextPrune = now + 60_000;
        for (const [id, until] of revoked) if (until <= now) revoked.delete(id);
      }
      return revoked;
    },
  };
}

/**
 * Retention of the sessions table (not part of the projection: a rebuild brings the rows back and
 * the next pass removes them again). A session row is dropped once it can no longer matter: its
 * refresh token expired, or it was revoked, more than `accessTtlMs` (JWT_EXPIRE) ago — so every
 * access token it issued has expired too, and refreshing with it answers 401 as before.
 */
export async function pruneEndedSessions(db: ReadModelDb, accessTtlMs: number, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - accessTtlMs).toISOString();
  const result = await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<', cutoff), eb.and([eb('revoked', '=', 1), eb('revoked_at', '<', cutoff)])]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

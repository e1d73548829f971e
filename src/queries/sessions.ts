/**
 * Reads of the sessions read model (src/projections/sessions.ts), and the table's retention: the
 * one write to a read model that is not a projection's.
 */
import type { ReadModelDb } from '../projections/runtime/projection.js';

/** Active sessions of a user (for "revoke the others" after a password change). */
export async function activeSessionIds(db: ReadModelDb, tenantId: string, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('sessions').select('id').where('tenant_id', '=', tenantId).where('user_id', '=', userId).where('revoked', '=', 0).execute();
  return rows.map((r) => r.id);
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

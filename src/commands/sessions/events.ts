/**
 * Events of the session aggregate: one login, and the refresh tokens it hands out. Refresh tokens
 * appear only as SHA-256 hashes.
 */
import { z } from 'zod';

export const SessionStarted = z.object({
  type: z.literal('SessionStarted'),
  data: z.object({
    session_id: z.string(),
    user_id: z.string(),
    refresh_token_hash: z.string(),
    /** ISO time after which the refresh token is refused. */
    expires_at: z.string(),
    user_agent: z.string().nullable(),
    ip: z.string().nullable(),
  }),
});

/** The refresh token was rotated: the previous one is retired (and revokes the session if it comes back). */
export const SessionRefreshed = z.object({
  type: z.literal('SessionRefreshed'),
  data: z.object({ refresh_token_hash: z.string(), expires_at: z.string() }),
});

export const SessionRevoked = z.object({
  type: z.literal('SessionRevoked'),
  data: z.object({ reason: z.enum(['logout', 'refresh_token_reused', 'password_changed', 'user_deleted']), by: z.string().nullable() }),
});

export const SessionEvent = z.discriminatedUnion('type', [SessionStarted, SessionRefreshed, SessionRevoked]);
export type SessionEvent = z.infer<typeof SessionEvent>;
export type RevokeReason = z.infer<typeof SessionRevoked>['data']['reason'];
export const SESSION_EVENT_TYPES = ['SessionStarted', 'SessionRefreshed', 'SessionRevoked'] as const;

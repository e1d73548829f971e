/**
 * Sessions: one per login. A session hands out one refresh token at a time; refreshing rotates
 * it. The decider is where rotation is exact across instances: two refreshes with the same token
 * race on the stream version and only one wins; a retired token that comes back (stolen, or
 * replayed) revokes the whole session.
 */
import { timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../../errors.js';
import type { Decider } from '../decider.js';
import { SessionEvent, type RevokeReason } from './events.js';

export interface SessionState {
  exists: boolean;
  userId: string;
  currentHash: string;
  /** Hashes of rotated-out refresh tokens (most recent last). */
  retiredHashes: string[];
  expiresAt: string;
  revoked: boolean;
}

export type SessionCommand =
  | { type: 'StartSession'; sessionId: string; userId: string; refreshHash: string; expiresAt: string; userAgent: string | null; ip: string | null }
  | { type: 'RotateRefreshToken'; presentedHash: string; newHash: string; expiresAt: string; now: string }
  /** `presentedHash`: revoking with a refresh token (logout without a session) proves possession of it. */
  | { type: 'RevokeSession'; reason: RevokeReason; by: string | null; presentedHash?: string };

/** How many rotated-out hashes a session remembers for reuse detection. */
const RETIRED_KEPT = 100;

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const sessions: Decider<SessionCommand, SessionState, SessionEvent> = {
  category: 'session',
  initialState: { exists: false, userId: '', currentHash: '', retiredHashes: [], expiresAt: '', revoked: false },
  events: SessionEvent,

  decide(command, state) {
    switch (command.type) {
      case 'StartSession':
        if (state.exists) throw new UnauthorizedError();
        return [
          {
            type: 'SessionStarted',
            data: { session_id: command.sessionId, user_id: command.userId, refresh_token_hash: command.refreshHash, expires_at: command.expiresAt, user_agent: command.userAgent, ip: command.ip },
          },
        ];
      case 'RotateRefreshToken': {
        if (!state.exists || state.revoked || Date.parse(command.now) >= Date.parse(state.expiresAt)) throw new UnauthorizedError();
        if (same(command.presentedHash, state.currentHash)) return [{ type: 'SessionRefreshed', data: { refresh_token_hash: command.newHash, expires_at: command.expiresAt } }];
        // A token this session already rotated away: someone holds a copy. End the session.
        if (state.retiredHashes.some((h) => same(h, command.presentedHash))) return [{ type: 'SessionRevoked', data: { reason: 'refresh_token_reused', by: null } }];
        throw new UnauthorizedError();
      }
      case 'RevokeSession': {
        if (!state.exists) throw new UnauthorizedError();
        const presented = command.presentedHash;
        if (presented !== undefined && !same(presented, state.currentHash) && !state.retiredHashes.some((h) => same(h, presented))) throw new UnauthorizedError();
        if (state.revoked) return [];
        return [{ type: 'SessionRevoked', data: { reason: command.reason, by: command.by } }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SessionStarted':
        return { ...state, exists: true, userId: event.data.user_id, currentHash: event.data.refresh_token_hash, expiresAt: event.data.expires_at };
      case 'SessionRefreshed':
        return { ...state, currentHash: event.data.refresh_token_hash, retiredHashes: [...state.retiredHashes, state.currentHash].slice(-RETIRED_KEPT), expiresAt: event.data.expires_at };
      case 'SessionRevoked':
        return { ...state, revoked: true };
    }
  },
};

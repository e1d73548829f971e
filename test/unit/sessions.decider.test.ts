/** Given / when / then over the session decider: start, rotation, reuse detection, revocation. */
import { describe, it } from 'vitest';
import { sessions, type SessionCommand } from '../../src/commands/sessions/decider.js';
import type { SessionEvent } from '../../src/commands/sessions/events.js';
import { UnauthorizedError } from '../../src/errors.js';
import { DeciderSpec } from '../support/decider-spec.js';

const spec = DeciderSpec.for(sessions);

const EXPIRES = '2100-01-01T00:00:00.000Z';
const NOW = '2030-01-01T00:00:00.000Z';
const started: SessionEvent = { type: 'SessionStarted', data: { session_id: 'ses_1', user_id: 'usr_1', refresh_token_hash: 'h1', expires_at: EXPIRES, user_agent: null, ip: '127.0.0.1' } };
const refreshed: SessionEvent = { type: 'SessionRefreshed', data: { refresh_token_hash: 'h2', expires_at: EXPIRES } };
const rotate = (presentedHash: string, now = NOW): SessionCommand => ({ type: 'RotateRefreshToken', presentedHash, newHash: 'h3', expiresAt: EXPIRES, now });
const rotatedToH3: SessionEvent = { type: 'SessionRefreshed', data: { refresh_token_hash: 'h3', expires_at: EXPIRES } };

describe('session decider', () => {
  it('starts a session', () => {
    spec.given([]).when({ type: 'StartSession', sessionId: 'ses_1', userId: 'usr_1', refreshHash: 'h1', expiresAt: EXPIRES, userAgent: null, ip: '127.0.0.1' }).then([started]);
  });

  it('rotates with the current refresh token', () => {
    spec.given([started]).when(rotate('h1')).then([rotatedToH3]);
    spec.given([started, refreshed]).when(rotate('h2')).then([rotatedToH3]);
  });

  it('revokes the session when a rotated-out token comes back', () => {
    spec.given([started, refreshed]).when(rotate('h1')).then([{ type: 'SessionRevoked', data: { reason: 'refresh_token_reused', by: null } }]);
  });

  it('refuses unknown tokens, revoked and expired sessions, and sessions that do not exist', () => {
    spec.given([started]).when(rotate('nope')).thenThrows(UnauthorizedError);
    spec.given([started, { type: 'SessionRevoked', data: { reason: 'logout', by: 'usr_1' } }]).when(rotate('h1')).thenThrows(UnauthorizedError);
    spec.given([started]).when(rotate('h1', '2100-01-01T00:00:00.000Z')).thenThrows(UnauthorizedError);
    spec.given([]).when(rotate('h1')).thenThrows(UnauthorizedError);
  });

  it('revokes once; with a refresh token only when it belongs to the session', () => {
    spec.given([started]).when({ type: 'RevokeSession', reason: 'logout', by: 'usr_1' }).then([{ type: 'SessionRevoked', data: { reason: 'logout', by: 'usr_1' } }]);
    spec.given([started]).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'h1' }).then([{ type: 'SessionRevoked', data: { reason: 'logout', by: null } }]);
    spec.given([started]).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'guess' }).thenThrows(UnauthorizedError);
    const revoked: SessionEvent[] = [started, { type: 'SessionRevoked', data: { reason: 'logout', by: null } }];
    spec.given(revoked).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'h1' }).thenNothingHappened();
  });
});

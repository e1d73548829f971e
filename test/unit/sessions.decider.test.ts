/** Given / when / then over the session decider: start, rotation, reuse detection, revocation. */
import { describe, expect, it } from 'vitest';
import { sessions, type SessionCommand } from '../../src/commands/sessions/decider.js';
import type { SessionEvent } from '../../src/commands/sessions/events.js';
import { UnauthorizedError } from '../../src/errors.js';

function given(history: SessionEvent[]) {
  const state = history.reduce(sessions.evolve, sessions.initialState);
  return { when: (command: SessionCommand) => sessions.decide(command, state) };
}

const EXPIRES = '2100-01-01T00:00:00.000Z';
const NOW = '2030-01-01T00:00:00.000Z';
const started: SessionEvent = { type: 'SessionStarted', data: { session_id: 'ses_1', user_id: 'usr_1', refresh_token_hash: 'h1', expires_at: EXPIRES, user_agent: null, ip: '127.0.0.1' } };
const refreshed: SessionEvent = { type: 'SessionRefreshed', data: { refresh_token_hash: 'h2', expires_at: EXPIRES } };
const rotate = (presentedHash: string, now = NOW): SessionCommand => ({ type: 'RotateRefreshToken', presentedHash, newHash: 'h3', expiresAt: EXPIRES, now });

describe('session decider', () => {
  it('starts a session', () => {
    expect(given([]).when({ type: 'StartSession', sessionId: 'ses_1', userId: 'usr_1', refreshHash: 'h1', expiresAt: EXPIRES, userAgent: null, ip: '127.0.0.1' })).toEqual([started]);
  });

  it('rotates with the current refresh token', () => {
    expect(given([started]).when(rotate('h1'))).toEqual([{ type: 'SessionRefreshed', data: { refresh_token_hash: 'h3', expires_at: EXPIRES } }]);
    expect(given([started, refreshed]).when(rotate('h2'))).toHaveLength(1);
  });

  it('revokes the session when a rotated-out token comes back', () => {
    expect(given([started, refreshed]).when(rotate('h1'))).toEqual([{ type: 'SessionRevoked', data: { reason: 'refresh_token_reused', by: null } }]);
  });

  it('refuses unknown tokens, revoked and expired sessions, and sessions that do not exist', () => {
    expect(() => given([started]).when(rotate('nope'))).toThrow(UnauthorizedError);
    expect(() => given([started, { type: 'SessionRevoked', data: { reason: 'logout', by: 'usr_1' } }]).when(rotate('h1'))).toThrow(UnauthorizedError);
    expect(() => given([started]).when(rotate('h1', '2100-01-01T00:00:00.000Z'))).toThrow(UnauthorizedError);
    expect(() => given([]).when(rotate('h1'))).toThrow(UnauthorizedError);
  });

  it('revokes once; with a refresh token only when it belongs to the session', () => {
    expect(given([started]).when({ type: 'RevokeSession', reason: 'logout', by: 'usr_1' })).toEqual([{ type: 'SessionRevoked', data: { reason: 'logout', by: 'usr_1' } }]);
    expect(given([started]).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'h1' })).toHaveLength(1);
    expect(() => given([started]).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'guess' })).toThrow(UnauthorizedError);
    const revoked: SessionEvent[] = [started, { type: 'SessionRevoked', data: { reason: 'logout', by: null } }];
    expect(given(revoked).when({ type: 'RevokeSession', reason: 'logout', by: null, presentedHash: 'h1' })).toEqual([]);
  });
});

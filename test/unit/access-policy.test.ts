/**
 * The access policy every authenticated request passes (src/auth/access-policy.ts), and the token
 * service deciding an unknown user or session again once its views have caught up.
 */
import { describe, expect, it } from 'vitest';
import { admitPrincipal } from '../../src/auth/access-policy.js';
import { TokenService, type Principal } from '../../src/auth/tokens.js';
import type { AccessState } from '../../src/views/access.js';
import type { ActiveSessions } from '../../src/views/sessions.js';
import { UnauthorizedError } from '../../src/errors.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const principal: Principal = { userId: 'usr_a', tenantId: 't1', role: 'user', sessionId: 'ses_a' };

function views(): { access: AccessState; sessions: ActiveSessions } {
  return {
    access: { disabledTenants: new Set(), disabledUsers: new Set(), users: new Map([['usr_a', { tenantId: 't1', role: 'user' as const }], ['usr_b', { tenantId: 't1', role: 'admin' as const }]]) },
    sessions: new Map([
      ['ses_a', { userId: 'usr_a', expiresAt: NOW + 60_000, revoked: false }],
      ['ses_b', { userId: 'usr_b', expiresAt: NOW + 60_000, revoked: false }],
      ['ses_old', { userId: 'usr_a', expiresAt: NOW - 1, revoked: false }],
    ]),
  };
}

describe('admitPrincipal', () => {
  it('admits an existing user of the token tenant with its active session, with the current role', () => {
    const { access, sessions } = views();
    expect(admitPrincipal(principal, access, sessions, NOW)).toEqual(principal);
    access.users.get('usr_a')!.role = 'admin';
    expect(admitPrincipal(principal, access, sessions, NOW)).toEqual({ ...principal, role: 'admin' });
  });

  it('refuses tokens without a session, of another tenant, with another user’s, an ended or a revoked session, or of disabled users and tenants', () => {
    const { access, sessions } = views();
    expect(admitPrincipal({ ...principal, sessionId: undefined }, access, sessions, NOW)).toBeNull();
    expect(admitPrincipal({ ...principal, tenantId: 't2' }, access, sessions, NOW)).toBeNull();
    expect(admitPrincipal({ ...principal, sessionId: 'ses_b' }, access, sessions, NOW)).toBeNull();
    expect(admitPrincipal({ ...principal, sessionId: 'ses_old' }, access, sessions, NOW)).toBeNull();
    sessions.get('ses_a')!.revoked = true;
    expect(admitPrincipal(principal, access, sessions, NOW)).toBeNull(); // refused at once, no catching up
    sessions.get('ses_a')!.revoked = false;
    access.disabledUsers.add('usr_a');
    expect(admitPrincipal(principal, access, sessions, NOW)).toBeNull();
    access.disabledUsers.clear();
    access.disabledTenants.add('t1');
    expect(admitPrincipal(principal, access, sessions, NOW)).toBeNull();
  });

  it('calls a user or session it does not know "unknown"', () => {
    const { access, sessions } = views();
    expect(admitPrincipal({ ...principal, userId: 'usr_nobody' }, access, sessions, NOW)).toBe('unknown');
    expect(admitPrincipal({ ...principal, sessionId: 'ses_new' }, access, sessions, NOW)).toBe('unknown');
  });
});

describe('TokenService access decisions', () => {
  it('decides an unknown session again after catching up: admitted once it arrived, refused otherwise', async () => {
    const { access, sessions } = views();
    const tokens = new TokenService('a-secret-of-enough-length', 60_000);
    let arrives = true;
    tokens.useAccessPolicy(
      (p) => admitPrincipal(p, access, sessions),
      async () => {
        if (arrives) sessions.set('ses_new', { userId: 'usr_a', expiresAt: Date.now() + 60_000, revoked: false });
      },
    );
    const fresh = { ...principal, sessionId: 'ses_new' };
    expect(() => tokens.admit(fresh)).toThrow(UnauthorizedError);
    expect(await tokens.admitEventually(fresh)).toEqual(fresh);
    arrives = false;
    await expect(tokens.admitEventually({ ...principal, sessionId: 'ses_never' })).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

/**
 * Refresh tokens: opaque random strings `<session id>.<43 random base64url chars>` (256 bits).
 * Only their SHA-256 is stored (a fast hash is right here: the input is a long random secret, not
 * a password). The session id in front lets a refresh find its session without a scan.
 */
import { createHash, randomBytes } from 'node:crypto';

const SESSION_ID = /^ses_[A-Za-z0-9]{12,32}$/;

export function newSessionId(): string {
  return `ses_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export function newRefreshToken(sessionId: string): string {
  return `${sessionId}.${randomBytes(32).toString('base64url')}`;
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The session a refresh token claims to belong to, or null when it is not one of ours. */
export function sessionIdOf(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot < 0) return null;
  const id = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  return SESSION_ID.test(id) && /^[A-Za-z0-9_-]{43}$/.test(secret) ? id : null;
}

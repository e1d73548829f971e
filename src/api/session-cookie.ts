/**
 * The `sy_session` cookie: the access token, for browsers. Flags from SESSION_SECURE,
 * SESSION_HTTP_ONLY and SESSION_SAME_SITE; it lives as long as the access token.
 */
import type { FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { SESSION_COOKIE } from './auth.js';

type CookieSettings = Config['auth']['session'];

function serialize(value: string, maxAgeSeconds: number, settings: CookieSettings): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`];
  if (settings.httpOnly) parts.push('HttpOnly');
  if (settings.secure) parts.push('Secure');
  parts.push(`SameSite=${settings.sameSite[0]!.toUpperCase()}${settings.sameSite.slice(1)}`);
  return parts.join('; ');
}

export function setSessionCookie(reply: FastifyReply, accessToken: string, maxAgeSeconds: number, settings: CookieSettings): void {
  reply.header('set-cookie', serialize(accessToken, maxAgeSeconds, settings));
}

export function clearSessionCookie(reply: FastifyReply, settings: CookieSettings): void {
  reply.header('set-cookie', serialize('', 0, settings));
}

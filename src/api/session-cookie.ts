/**
 * The browser's cookies: `sy_session` (the access token; flags from SESSION_SECURE,
 * SESSION_HTTP_ONLY and SESSION_SAME_SITE; it lives as long as the access token) and `sy_refresh`
 * (the refresh token: always HttpOnly, sent only to /v1/auth, lives as long as the refresh token).
 */
import type { FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { REFRESH_COOKIE, SESSION_COOKIE } from './auth.js';

type CookieSettings = Config['auth']['session'];

function serialize(name: string, value: string, maxAgeSeconds: number, settings: CookieSettings, path = '/', httpOnly = settings.httpOnly): string {
  const parts = [`${name}=${value}`, `Path=${path}`, `Max-Age=${maxAgeSeconds}`];
  if (httpOnly) parts.push('HttpOnly');
  if (settings.secure) parts.push('Secure');
  parts.push(`SameSite=${settings.sameSite[0]!.toUpperCase()}${settings.sameSite.slice(1)}`);
  return parts.join('; ');
}

export interface SessionCookies {
  accessToken: string;
  accessMaxAgeSeconds: number;
  refreshToken: string;
  refreshMaxAgeSeconds: number;
}

export function setSessionCookies(reply: FastifyReply, cookies: SessionCookies, settings: CookieSettings): void {
  reply.header('set-cookie', [
    serialize(SESSION_COOKIE, cookies.accessToken, cookies.accessMaxAgeSeconds, settings),
    serialize(REFRESH_COOKIE, cookies.refreshToken, cookies.refreshMaxAgeSeconds, settings, '/v1/auth', true),
  ]);
}

export function clearSessionCookies(reply: FastifyReply, settings: CookieSettings): void {
  reply.header('set-cookie', [serialize(SESSION_COOKIE, '', 0, settings), serialize(REFRESH_COOKIE, '', 0, settings, '/v1/auth', true)]);
}

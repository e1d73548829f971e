/**
 * Who is calling. Bearer access tokens (JWT) — or, when no Authorization header is sent, the
 * `sy_session` cookie that login sets — resolve to a Principal once per request; routes that need
 * one use `requirePermission` (or `requireRole`). After the signature check, every request passes
 * the token service's access policy (disabled users and tenants, revoked sessions: in memory).
 */
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Rbac } from '../auth/rbac.js';
import type { Principal, Role, TokenService } from '../auth/tokens.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { headerOf, type HttpRequestLike } from '../http-exchange.js';
import { FifoMap } from '../fifo-map.js';

const resolved = new WeakMap<HttpRequestLike, Promise<Principal | null>>();

/**
 * Access tokens already verified, per TokenService (a token is only trusted again by the service
 * whose key verified it). Verifying a JWT (WebCrypto key import + HMAC) was the largest single
 * cost of a relay request, and a client sends the same token on every request. An entry lives
 * until the token's own `exp` (the instant jose would start refusing it) or VERIFIED_TTL_MS,
 * whichever comes first; failures are never cached, so a bad token is checked every time.
 */
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;
const verifiedTokens = new WeakMap<TokenService, FifoMap<string, { principal: Principal; until: number }>>();

/** The `exp` claim of a token whose signature has just been verified, in ms (null: none). */
function expiryMs(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
  return typeof exp === 'number' ? exp * 1000 : null;
}

function verifyCached(tokens: TokenService, token: string): Promise<Principal> {
  let cache = verifiedTokens.get(tokens);
  if (!cache) {
    cache = new FifoMap(VERIFIED_MAX);
    verifiedTokens.set(tokens, cache);
  }
  const now = Date.now();
  const hit = cache.get(token);
  // An expired entry stays until it is set again or pushed out: it no longer counts as verified.
  if (hit && hit.until > now) return Promise.resolve(hit.principal);
  return tokens.verifyAccessToken(token).then((principal) => {
    const exp = expiryMs(token);
    const until = Math.min(now + VERIFIED_TTL_MS, exp ?? Infinity);
    // Bounded: past VERIFIED_MAX tokens the oldest entry goes.
    if (until > Date.now()) cache.set(token, { principal, until });
    return principal;
  });
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(request: HttpRequestLike): string | null {
  const header = headerOf(request, 'authorization');
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

/** The session cookie: login and refresh set it to the access token, logout clears it. */
export const SESSION_COOKIE = 'sy_session';
/** The refresh cookie (HttpOnly, path /v1/auth): the web UI's refresh token, which its script never sees. */
export const REFRESH_COOKIE = 'sy_refresh';

/**
 * A state-changing request made by another site's page (the browser says so in Sec-Fetch-Site,
 * or sends an Origin of another host): the cookie must not authenticate it (CSRF).
 */
function crossSiteWrite(request: HttpRequestLike): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return false;
  if (headerOf(request, 'sec-fetch-site') === 'cross-site') return true;
  const origin = headerOf(request, 'origin');
  if (!origin) return false;
  try {
    return new URL(origin).host !== headerOf(request, 'host');
  } catch {
    return true; // "null" and other opaque origins
  }
}

/** A cookie's value, or null; never for another site's state-changing request (CSRF). */
export function cookieValue(request: HttpRequestLike, name: string): string | null {
  const header = headerOf(request, 'cookie');
  if (!header || crossSiteWrite(request)) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const cookieToken = (request: HttpRequestLike): string | null => cookieValue(request, SESSION_COOKIE);

/** The caller, or null when no credentials were sent. Bad credentials throw 401. */
export function principalOf(request: HttpRequestLike, tokens: TokenService): Promise<Principal | null> {
  let principal = resolved.get(request);
  if (!principal) {
    const token = request.headers.authorization === undefined ? cookieToken(request) : bearerToken(request);
    // The signature check may come from the cache; the access policy runs on every request.
    principal = token ? verifyCached(tokens, token).then((p) => tokens.admitEventually(p)) : Promise.resolve(null);
    resolved.set(request, principal);
  }
  return principal;
}

/**
 * The caller when that needs no waiting: no credentials (null), or a token whose signature check
 * is cached, admitted by the access policy now (which throws as principalOf's promise would
 * reject). `undefined`: ask principalOf. For the relay's hot path, where the promise chain of
 * principalOf was a visible cost per request for what is nearly always a cache hit.
 */
export function principalNow(request: HttpRequestLike, tokens: TokenService): Principal | null | undefined {
  if (resolved.has(request)) return undefined;
  const token = request.headers.authorization === undefined ? cookieToken(request) : bearerToken(request);
  if (!token) return null;
  const hit = verifiedTokens.get(tokens)?.get(token);
  if (!hit || hit.until <= Date.now()) return undefined;
  const decision = tokens.decide(hit.principal);
  // A user or session not (yet) known here: principalOf waits for the views before deciding.
  if (decision === 'unknown') return undefined;
  if (decision === null) throw new UnauthorizedError();
  return decision;
}

/** Like principalOf, but never throws: for checks that only need to know "is this an admin?". */
export async function principalOrNull(request: HttpRequestLike, tokens: TokenService): Promise<Principal | null> {
  return principalOf(request, tokens).catch(() => null);
}

export async function requirePrincipal(request: HttpRequestLike, tokens: TokenService): Promise<Principal> {
  const principal = await principalOf(request, tokens);
  if (!principal) throw new UnauthorizedError();
  return principal;
}

/** preHandler: the caller must be authenticated and, when RBAC is on, hold `role`. */
export function requireRole(tokens: TokenService, role: Role, rbacEnabled: boolean): preHandlerAsyncHookHandler {
  return async (request) => {
    const principal = await requirePrincipal(request, tokens);
    if (rbacEnabled && role === 'admin' && principal.role !== 'admin') {
      logForbidden(request, principal, 'role admin');
      throw new ForbiddenError('this endpoint requires the admin role', 'forbidden');
    }
  };
}

/** preHandler: the caller must be authenticated and, when RBAC is on, hold `permission` (`*` holds every one). */
export function requirePermission(auth: { tokens: TokenService; rbac: Rbac }, permission: string): preHandlerAsyncHookHandler {
  return async (request) => {
    const principal = await requirePrincipal(request, auth.tokens);
    if (!auth.rbac.allows(principal.role, permission)) {
      logForbidden(request, principal, `permission ${permission}`);
      throw new ForbiddenError(`this endpoint requires the ${permission} permission`, 'forbidden');
    }
  };
}

/** A security entry for a refused (403) attempt: who, from where, at what, lacking what. */
function logForbidden(request: FastifyRequest, principal: Principal, lacking: string): void {
  const route = request.routeOptions.url ?? request.url.split('?')[0];
  request.log.warn(
    { category: 'security', component: 'auth', event: 'forbidden', user_id: principal.userId, tenant_id: principal.tenantId, session_id: principal.sessionId, ip_address: request.ip, method: request.method, route, role: principal.role, lacking },
    `forbidden: ${request.method} ${route} needs ${lacking}`,
  );
}

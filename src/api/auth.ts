/**
 * Who is calling. Bearer access tokens (JWT) resolve to a Principal once per request; routes that
 * need one use `requireRole`. (API keys for the relay arrive with the relay itself.)
 */
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Principal, Role, TokenService } from '../auth/tokens.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';

const resolved = new WeakMap<FastifyRequest, Promise<Principal | null>>();

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

/** The caller, or null when no credentials were sent. Bad credentials throw 401. */
export function principalOf(request: FastifyRequest, tokens: TokenService): Promise<Principal | null> {
  let principal = resolved.get(request);
  if (!principal) {
    const token = bearerToken(request);
    principal = token ? tokens.verifyAccessToken(token) : Promise.resolve(null);
    resolved.set(request, principal);
  }
  return principal;
}

/** Like principalOf, but never throws: for checks that only need to know "is this an admin?". */
export async function principalOrNull(request: FastifyRequest, tokens: TokenService): Promise<Principal | null> {
  return principalOf(request, tokens).catch(() => null);
}

export async function requirePrincipal(request: FastifyRequest, tokens: TokenService): Promise<Principal> {
  const principal = await principalOf(request, tokens);
  if (!principal) throw new UnauthorizedError();
  return principal;
}

/** preHandler: the caller must be authenticated and, when RBAC is on, hold `role`. */
export function requireRole(tokens: TokenService, role: Role, rbacEnabled: boolean): preHandlerAsyncHookHandler {
  return async (request) => {
    const principal = await requirePrincipal(request, tokens);
    if (rbacEnabled && role === 'admin' && principal.role !== 'admin') throw new ForbiddenError('this endpoint requires the admin role', 'forbidden');
  };
}

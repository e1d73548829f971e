/**
 * Whether the principal of a verified access token may act now, from in-memory live views (no
 * database round trip on any request): its user must exist in the token's tenant and be enabled,
 * the tenant enabled, and the token's session (`sid`) one of that user's active sessions — never
 * revoked, not past its end. The user's current role replaces the one the token was issued with.
 */
import type { AccessState } from '../views/access.js';
import { activeSession, type ActiveSessions } from '../views/sessions.js';
import type { AccessDecision, Principal } from './tokens.js';

/**
 * A user or session missing from the views is `'unknown'` rather than refused outright: the token
 * may come from a login on another instance whose events have not arrived here yet (the token
 * service decides again once the views caught up with the log, then refuses).
 */
export function admitPrincipal(principal: Principal, access: AccessState, sessions: ActiveSessions, now = Date.now()): AccessDecision {
  // Every token we issue names its session (logins and CLI-minted tokens alike).
  if (principal.sessionId === undefined) return null;
  const user = access.users.get(principal.userId);
  const session = sessions.get(principal.sessionId);
  if (!user || !session) return 'unknown';
  if (user.tenantId !== principal.tenantId || !activeSession(sessions, principal.sessionId, principal.userId, now)) return null;
  if (access.disabledUsers.has(principal.userId) || access.disabledTenants.has(principal.tenantId)) return null;
  return user.role === principal.role ? principal : { ...principal, role: user.role };
}

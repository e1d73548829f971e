/**
 * Login, refresh and logout. A login starts a `session` aggregate: the client gets a short-lived
 * access token (JWT, also set as the `sy_session` cookie) and an opaque refresh token, stored
 * only hashed. Refreshing rotates the refresh token (the old one is retired; presenting a retired
 * one revokes the session). Refresh and logout read the sessions read model, so a revocation
 * holds on every instance; access tokens of a revoked session are refused at once through the
 * revoked-sessions live view.
 */
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mfaProof } from '../../auth/mfa.js';
import { dummyPasswordHash, hashPassword, MAX_PASSWORD_LENGTH, isImportedHash, verifyPassword } from '../../auth/passwords.js';
import { hashRefreshToken, newRefreshToken, newSessionId, sessionIdOf } from '../../auth/refresh-tokens.js';
import type { Role } from '../../auth/tokens.js';
import type { CommandResult } from '../../commands/decider.js';
import { sessions } from '../../commands/sessions/decider.js';
import { DEFAULT_TENANT } from '../../commands/tenants/decider.js';
import { countFailedLogin } from '../../alerts/sources.js';
import { normalizeEmail, users } from '../../commands/users/decider.js';
import { AppError, UnauthorizedError } from '../../errors.js';
import { cookieValue, REFRESH_COOKIE, requirePrincipal } from '../auth.js';
import type { AppContext } from '../context.js';
import { clearSessionCookies, setSessionCookies } from '../session-cookie.js';

export const LoginRequest = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  mfa_code: z.string().min(1).max(64).optional().describe('TOTP code, or an unused recovery code, when multi-factor login is on for the user'),
}).meta({ id: 'LoginRequest' });

export const TokenPair = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().describe('seconds until the access token expires'),
}).meta({ id: 'TokenPair' });

export const RefreshRequest = z.object({
  refresh_token: z.string().min(1).max(512).optional().describe('absent: the sy_refresh cookie that login set (the web UI)'),
});
export const LogoutRequest = z.object({ refresh_token: z.string().min(1).max(512).optional() });
export const LogoutResponse = z.object({ revoked: z.boolean().describe('whether a session was ended (false for a token without one)') });

interface Account {
  id: string;
  tenant_id: string;
  role: string;
}

export function authRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const { auth } = ctx.config;
  const tags = ['auth'];

  /** Read-your-writes for sessions: the read model (refresh, logout) and the active-sessions view. */
  const settle = async (position: number | null) => {
    if (position === null) return;
    await Promise.all([ctx.runner.waitFor(position, { projections: ['sessions'] }), ctx.views.sessions.waitFor(position)]);
  };

  const refused = (account: { id: string; tenant_id: string; disabled: number }) => {
    const access = ctx.views.access.state;
    return account.disabled === 1 || access.disabledUsers.has(account.id) || access.disabledTenants.has(account.tenant_id);
  };

  /** Access token + cookie for a session whose refresh token is `refreshToken`. */
  const issue = async (reply: FastifyReply, account: Account, sessionId: string, refreshToken: string): Promise<z.infer<typeof TokenPair>> => {
    const accessToken = await ctx.tokens.issueAccessToken({ userId: account.id, tenantId: account.tenant_id, role: account.role as Role, sessionId });
    const expiresIn = Math.floor(auth.jwtExpireMs / 1000);
    setSessionCookies(reply, { accessToken, accessMaxAgeSeconds: expiresIn, refreshToken, refreshMaxAgeSeconds: Math.floor(auth.jwtRefreshExpireMs / 1000) }, auth.session);
    return { access_token: accessToken, refresh_token: refreshToken, token_type: 'Bearer' as const, expires_in: expiresIn };
  };

  const refreshExpiry = () => new Date(Date.now() + auth.jwtRefreshExpireMs).toISOString();

  /** Spends the second factor at login: 401 `mfa_required` without one, 401 when it is wrong or used. */
  const checkSecondFactor = async (request: FastifyRequest, account: Account & { mfa_secret_sealed: string | null }, code: string | undefined) => {
    if (!code) throw new UnauthorizedError('multi-factor code required', 'mfa_required');
    const proof = mfaProof(code, account.mfa_secret_sealed, ctx.mfa.secrets, ctx.mfa.recoveryCodes);
    if (!proof) throw new UnauthorizedError();
    try {
      await ctx.commands.execute(users, account.id, { type: 'UseMfa', proof }, { tenantId: account.tenant_id, causationId: request.id });
    } catch (error) {
      if (error instanceof AppError && error.status < 500) throw new UnauthorizedError(); // replayed step, spent code
      throw error;
    }
  };

  // Computed now, in the background, so that the first unknown email is not slower than later ones.
  void dummyPasswordHash();

  /**
   * Password guessing: failed logins are counted per email (known or not: the answer must not
   * tell which emails exist) and per client address, in sliding windows of the counters port (so
   * across instances with Redis). Over either limit, login answers 429 too_many_login_attempts
   * WITHOUT checking the password, until enough failures leave the window.
   */
  const throttle = auth.loginThrottle;
  const failureWindows = (email: string, ip: string) => [
    { key: `login-failures:email:${email}`, limit: throttle.maxFailuresPerEmail },
    { key: `login-failures:ip:${ip}`, limit: throttle.maxFailuresPerIp },
  ];
  /** Security entries of refused logins: one call on the failure branch, never the password or the code. */
  const securityLog = ctx.logger.child({ category: 'security', component: 'auth' });
  const logRefusedLogin = (request: FastifyRequest, event: 'login_failed' | 'login_locked_out' | 'mfa_failed', email: string, ip: string, reason: string, account?: { id: string; tenant_id: string }) =>
    securityLog.warn({ event, request_id: request.id, ip_address: ip, email, reason, ...(account && { user_id: account.id, tenant_id: account.tenant_id }) }, `${event === 'mfa_failed' ? 'multi-factor check failed' : event === 'login_locked_out' ? 'login refused: too many failures' : 'login failed'} for ${email} from ${ip} (${reason})`);
  const refuseIfThrottled = async (request: FastifyRequest, email: string, ip: string) => {
    for (const window of failureWindows(email, ip)) {
      if ((await ctx.counters.peekWindow(window.key, throttle.windowMs)) < window.limit) continue;
      logRefusedLogin(request, 'login_locked_out', email, ip, window.key.startsWith('login-failures:email:') ? 'too many failures for this email' : 'too many failures from this address');
      // The oldest failure could leave sooner; the window length is the answer that is never early.
      const retryAfter = String(Math.ceil(throttle.windowMs / 1000));
      throw new AppError(429, 'rate_limit_error', 'too_many_login_attempts', `too many failed logins; retry after ${retryAfter}s`, { 'retry-after': retryAfter });
    }
  };
  /** `tenantId`: the account's tenant; unknown emails count for the default tenant (its operators watch guessing). */
  const countFailure = async (email: string, ip: string, tenantId: string) => {
    for (const window of failureWindows(email, ip)) await ctx.counters.hitWindow(window.key, { limit: window.limit, windowMs: throttle.windowMs });
    await countFailedLogin(ctx.counters, tenantId);
  };

  /** An imported (bcrypt) hash is replaced by scrypt while the password is at hand; a failure never fails the login. */
  const rehash = async (request: FastifyRequest, userId: string, tenantId: string, password: string) => {
    try {
      await ctx.commands.execute(users, userId, { type: 'ChangePassword', passwordHash: await hashPassword(password) }, { tenantId, causationId: request.id });
    } catch (error) {
      request.log.warn({ err: error, user_id: userId }, 'could not re-hash a password at login');
    }
  };

  return async (app) => {
    app.post('/v1/auth/login', { schema: { tags, summary: 'Log in with email and password (and an MFA code when enabled); 429 too_many_login_attempts after repeated failures', body: LoginRequest, response: { 200: TokenPair } } }, async (request, reply) => {
      const email = normalizeEmail(request.body.email);
      const ip = ctx.keyGate.clientAddress(request);
      await refuseIfThrottled(request, email, ip);
      const account = await ctx.queries.userByEmail(email);
      // Unknown emails cost a hash too: the answer time does not tell which emails exist.
      const matches = await verifyPassword(request.body.password, account?.password_hash ?? (await dummyPasswordHash()));
      if (!account || !matches || refused(account)) {
        logRefusedLogin(request, 'login_failed', email, ip, !account ? 'unknown user' : !matches ? 'wrong password' : 'account disabled', account);
        await countFailure(email, ip, account?.tenant_id ?? DEFAULT_TENANT);
        throw new UnauthorizedError();
      }
      if (auth.mfaEnabled && account.mfa_enabled === 1) {
        try {
          await checkSecondFactor(request, account, request.body.mfa_code);
        } catch (error) {
          // A missing code is a step of a normal login, not a guess; a wrong one is a guess.
          if (error instanceof UnauthorizedError && error.code !== 'mfa_required') {
            logRefusedLogin(request, 'mfa_failed', email, ip, 'wrong or used code', account);
            await countFailure(email, ip, account.tenant_id);
          }
          throw error;
        }
      }
      if (isImportedHash(account.password_hash)) await rehash(request, account.id, account.tenant_id, request.body.password);

      const sessionId = newSessionId();
      const refreshToken = newRefreshToken(sessionId);
      const started = await ctx.commands.execute(
        sessions,
        sessionId,
        {
          type: 'StartSession',
          sessionId,
          userId: account.id,
          refreshHash: hashRefreshToken(refreshToken),
          expiresAt: refreshExpiry(),
          userAgent: request.headers['user-agent']?.slice(0, 255) ?? null,
          ip: request.ip,
        },
        { tenantId: account.tenant_id, causationId: request.id },
      );
      await settle(started.position);
      return issue(reply, account, sessionId, refreshToken);
    });

    app.post('/v1/auth/refresh', { schema: { tags, summary: 'Exchange a refresh token for a new token pair (the old refresh token is revoked)', body: RefreshRequest.nullish(), response: { 200: TokenPair } } }, async (request, reply) => {
      const presented = request.body?.refresh_token ?? cookieValue(request, REFRESH_COOKIE);
      if (!presented) throw new UnauthorizedError();
      const sessionId = sessionIdOf(presented);
      const session = sessionId ? await ctx.queries.session(sessionId) : undefined;
      if (!sessionId || !session || session.revoked === 1 || Date.parse(session.expires_at) <= Date.now()) throw new UnauthorizedError();
      const account = await ctx.queries.user(session.tenant_id, session.user_id);
      if (!account || refused(account)) throw new UnauthorizedError();

      const next = newRefreshToken(sessionId);
      const rotated: CommandResult<unknown, { type: string }> = await ctx.commands.execute(
        sessions,
        sessionId,
        { type: 'RotateRefreshToken', presentedHash: hashRefreshToken(presented), newHash: hashRefreshToken(next), expiresAt: refreshExpiry(), now: new Date().toISOString() },
        { tenantId: session.tenant_id, causationId: request.id },
      );
      await settle(rotated.position);
      // A retired token came back: the session is now revoked, for its holder too.
      if (rotated.events.some((e) => e.type === 'SessionRevoked')) throw new UnauthorizedError();
      return issue(reply, account, sessionId, next);
    });

    app.post(
      '/v1/auth/logout',
      { schema: { tags, summary: 'Revoke the refresh token given, or the calling session; clears the session cookie', body: LogoutRequest.nullish(), response: { 200: LogoutResponse } } },
      async (request, reply) => {
        // A refresh token in the body must be known; the cookie's may be stale (then the calling session ends).
        const given = request.body?.refresh_token;
        const token = given ?? cookieValue(request, REFRESH_COOKIE) ?? undefined;
        const sessionId = token === undefined ? null : sessionIdOf(token);
        const session = sessionId ? await ctx.queries.session(sessionId) : undefined;
        let result: CommandResult<unknown, unknown> | null = null;
        if (given !== undefined && (!sessionId || !session)) throw new UnauthorizedError();
        if (token !== undefined && sessionId && session) {
          result = await ctx.commands.execute(
            sessions,
            sessionId,
            { type: 'RevokeSession', reason: 'logout', by: session.user_id, presentedHash: hashRefreshToken(token) },
            { tenantId: session.tenant_id, causationId: request.id },
          );
        } else {
          const principal = await requirePrincipal(request, ctx.tokens);
          if (principal.sessionId !== undefined) {
            result = await ctx.commands.execute(sessions, principal.sessionId, { type: 'RevokeSession', reason: 'logout', by: principal.userId }, { tenantId: principal.tenantId, causationId: request.id });
          }
        }
        await settle(result?.position ?? null);
        clearSessionCookies(reply, auth.session);
        return { revoked: result !== null };
      },
    );
  };
}

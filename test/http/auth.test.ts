/**
 * Login, refresh (rotation, reuse detection), logout and revocation, the session cookie, and
 * refusal of disabled users / tenants at once — against the real server.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../src/auth/tokens.js';
import { call, createUser, login, loginAsAdmin, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';

const UNAUTHORIZED = { error: { message: 'unauthorized', type: 'authentication_error', code: 'unauthorized', param: null } };

describe('authentication', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  const me = (token: string) => call(`${s.url}/v1/users/me`, { token });
  const refresh = (refreshToken: string) => call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: refreshToken } });
  const newUser = async () => {
    const user = await createUser(s.url, s.adminToken);
    return { ...user, tokens: await login(s.url, user.email, TEST_USER_PASSWORD) };
  };

  it('logs in with email and password and answers a token pair', async () => {
    const res = await call(`${s.url}/v1/auth/login`, { body: { email: s.userEmail.toUpperCase(), password: TEST_USER_PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ access_token: expect.any(String), refresh_token: expect.stringMatching(/^ses_[A-Za-z0-9]+\.[A-Za-z0-9_-]{43}$/), token_type: 'Bearer', expires_in: 86400 });
    const [header, payload] = (res.json.access_token as string).split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    expect(header).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toMatchObject({ sub: s.userId, tid: 'default', role: 'user', sid: (res.json.refresh_token as string).split('.')[0], iss: 'switchyard' });
    expect((await me(res.json.access_token)).json).toMatchObject({ id: s.userId, email: s.userEmail, tenant_id: 'default', role: 'user' });
    // The refresh token is stored only hashed, in the log and in the read model.
    const sid = payload!.sid as string;
    const events = await s.app.ctx.store.readStream(`session-${sid}`);
    expect(JSON.stringify(events)).not.toContain((res.json.refresh_token as string).split('.')[1]);
    const row = await s.app.ctx.sql.db.selectFrom('sessions').selectAll().where('id', '=', sid).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ tenant_id: 'default', user_id: s.userId, revoked: 0 });
    expect(row.refresh_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers every bad credential with the same 401', async () => {
    for (const body of [
      { email: s.userEmail, password: 'wrong-password' },
      { email: 'nobody@switchyard.test', password: TEST_USER_PASSWORD },
    ]) {
      const res = await call(`${s.url}/v1/auth/login`, { body });
      expect(res.status).toBe(401);
      expect(res.json).toEqual(UNAUTHORIZED);
    }
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: s.userEmail } })).status).toBe(400);
    for (const token of ['garbage', `${s.userToken}x`]) expect((await me(token)).json).toEqual(UNAUTHORIZED);
    expect((await call(`${s.url}/v1/users/me`)).json).toEqual(UNAUTHORIZED);
  });

  it('refuses expired tokens, alg "none", and tokens signed with another key', async () => {
    const expired = await s.app.ctx.tokens.issueAccessToken({ userId: s.userId, tenantId: 'default', role: 'user' }, -1000);
    expect((await me(expired)).json).toEqual(UNAUTHORIZED);
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: s.userId, tid: 'default', role: 'admin', iss: 'switchyard', exp: 9999999999 })).toString('base64url')}.`;
    expect((await me(none)).status).toBe(401);
    const foreign = await new TokenService('another-secret-of-enough-length', 60_000).issueAccessToken({ userId: s.userId, tenantId: 'default', role: 'admin' });
    expect((await me(foreign)).status).toBe(401);
    const hs512 = await new SignJWT({ tid: 'default', role: 'admin' }).setProtectedHeader({ alg: 'HS512' }).setSubject(s.userId).setIssuer('switchyard').setExpirationTime('1h').sign(new Uint8Array(64));
    expect((await me(hs512)).status).toBe(401);
  });

  it('rotates the refresh token: the new pair works, the old refresh token is revoked', async () => {
    const { tokens } = await newUser();
    const first = await refresh(tokens.refresh_token);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ token_type: 'Bearer', expires_in: 86400 });
    expect(first.json.refresh_token).not.toBe(tokens.refresh_token);
    expect(first.json.refresh_token.split('.')[0]).toBe(tokens.refresh_token.split('.')[0]); // same session
    expect((await me(first.json.access_token)).status).toBe(200);
    const second = await refresh(first.json.refresh_token);
    expect(second.status).toBe(200);
    expect((await refresh('garbage')).json).toEqual(UNAUTHORIZED);
    // A guessed secret for a known session id is refused and changes nothing.
    expect((await refresh(`${tokens.refresh_token.split('.')[0]}.${'A'.repeat(43)}`)).status).toBe(401);
    expect((await me(second.json.access_token)).status).toBe(200);
  });

  it('revokes the whole session when a rotated-out refresh token comes back (theft detection)', async () => {
    const { tokens } = await newUser();
    const rotated = await refresh(tokens.refresh_token);
    expect(rotated.status).toBe(200);
    const reused = await refresh(tokens.refresh_token);
    expect(reused.json).toEqual(UNAUTHORIZED);
    // Everything of that session is dead now, on every instance: refresh and access tokens alike.
    expect((await refresh(rotated.json.refresh_token)).status).toBe(401);
    expect((await me(rotated.json.access_token)).status).toBe(401);
    expect((await me(tokens.access_token)).status).toBe(401);
    const sid = tokens.refresh_token.split('.')[0]!;
    const row = await s.app.ctx.sql.db.selectFrom('sessions').selectAll().where('id', '=', sid).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ revoked: 1, revoke_reason: 'refresh_token_reused' });
  });

  it('logs out with a refresh token: it and the access tokens of its session stop working at once', async () => {
    const { tokens } = await newUser();
    expect((await me(tokens.access_token)).status).toBe(200);
    const out = await call(`${s.url}/v1/auth/logout`, { body: { refresh_token: tokens.refresh_token } });
    expect(out.status).toBe(200);
    expect(out.json).toEqual({ revoked: true });
    expect(out.headers.getSetCookie()[0]).toMatch(/^sy_session=; Path=\/; Max-Age=0/);
    expect((await refresh(tokens.refresh_token)).json).toEqual(UNAUTHORIZED);
    expect((await me(tokens.access_token)).json).toEqual(UNAUTHORIZED);
    expect((await call(`${s.url}/v1/auth/logout`, { body: { refresh_token: 'ses_nothing.x' } })).status).toBe(401);
  });

  it("logs out the calling session (bearer) and leaves the user's other sessions alone", async () => {
    const user = await newUser();
    const other = await login(s.url, user.email, TEST_USER_PASSWORD);
    const out = await call(`${s.url}/v1/auth/logout`, { method: 'POST', token: user.tokens.access_token });
    expect(out.json).toEqual({ revoked: true });
    expect((await me(user.tokens.access_token)).status).toBe(401);
    expect((await refresh(user.tokens.refresh_token)).status).toBe(401);
    expect((await me(other.access_token)).status).toBe(200);
    expect((await refresh(other.refresh_token)).status).toBe(200);
    expect((await call(`${s.url}/v1/auth/logout`, { method: 'POST' })).json).toEqual(UNAUTHORIZED);
  });

  it('sets the session cookie at login and refresh, accepts it without an Authorization header, clears it at logout', async () => {
    const user = await newUser();
    const cookie = user.tokens.setCookie!;
    expect(cookie).toBe(`sy_session=${user.tokens.access_token}; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax`);
    const jar = `theme=dark; sy_session=${user.tokens.access_token}`;
    const viaCookie = await call(`${s.url}/v1/users/me`, { headers: { cookie: jar } });
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.json.id).toBe(user.id);
    // An Authorization header wins over the cookie.
    expect((await call(`${s.url}/v1/users/me`, { headers: { cookie: jar, authorization: 'Bearer nope' } })).status).toBe(401);
    // A state-changing request from another site's page is not authenticated by the cookie (CSRF).
    const patch = (headers: Record<string, string>) => call(`${s.url}/v1/users/me`, { method: 'PATCH', headers: { cookie: jar, ...headers }, body: { preferences: { a: 1 } } });
    expect((await patch({ origin: 'https://evil.example' })).status).toBe(401);
    expect((await patch({ 'sec-fetch-site': 'cross-site' })).status).toBe(401);
    expect((await patch({ origin: s.url })).status).toBe(200);
    const refreshed = await call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: user.tokens.refresh_token } });
    expect(refreshed.headers.getSetCookie()).toEqual([
      `sy_session=${refreshed.json.access_token}; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax`,
      `sy_refresh=${refreshed.json.refresh_token}; Path=/v1/auth; Max-Age=2592000; HttpOnly; SameSite=Lax`,
    ]);
    const out = await call(`${s.url}/v1/auth/logout`, { method: 'POST', headers: { cookie: `sy_session=${refreshed.json.access_token}` } });
    expect(out.json).toEqual({ revoked: true });
    expect(out.headers.getSetCookie()).toEqual(['sy_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax', 'sy_refresh=; Path=/v1/auth; Max-Age=0; HttpOnly; SameSite=Lax']);
    expect((await call(`${s.url}/v1/users/me`, { headers: { cookie: `sy_session=${refreshed.json.access_token}` } })).status).toBe(401);
  });

  it('refuses a disabled user at once, even with an unexpired (and already verified) token, and lets them back when enabled', async () => {
    const user = await newUser();
    expect((await me(user.tokens.access_token)).status).toBe(200); // verified (and cached) once
    const disabled = await call(`${s.url}/v1/admin/users/${user.id}/disable`, { method: 'POST', token: s.adminToken });
    expect(disabled.json).toMatchObject({ id: user.id, disabled: true });
    expect((await me(user.tokens.access_token)).json).toEqual(UNAUTHORIZED);
    expect((await call(`${s.url}/v1/users/me`, { headers: { cookie: `sy_session=${user.tokens.access_token}` } })).status).toBe(401);
    expect((await refresh(user.tokens.refresh_token)).json).toEqual(UNAUTHORIZED);
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: user.email, password: TEST_USER_PASSWORD } })).json).toEqual(UNAUTHORIZED);

    await call(`${s.url}/v1/admin/users/${user.id}/enable`, { method: 'POST', token: s.adminToken });
    expect((await me(user.tokens.access_token)).status).toBe(200);
    await login(s.url, user.email, TEST_USER_PASSWORD);
  });

  it('refuses a disabled user on the relay at once, with a token whose signature check is cached (header and cookie)', async () => {
    const user = await newUser();
    // No channel serves the model: an authenticated caller gets as far as routing (404 model_not_found).
    const chat = (auth: { token: string } | { headers: Record<string, string> }) =>
      call(`${s.url}/v1/chat/completions`, { ...auth, body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } });
    const cookie = { headers: { cookie: `sy_session=${user.tokens.access_token}` } };
    expect((await chat({ token: user.tokens.access_token })).json.error.code).toBe('model_not_found'); // verified (and cached) once
    expect((await chat(cookie)).json.error.code).toBe('model_not_found');
    await call(`${s.url}/v1/admin/users/${user.id}/disable`, { method: 'POST', token: s.adminToken });
    expect((await chat({ token: user.tokens.access_token })).json).toEqual(UNAUTHORIZED);
    expect((await chat(cookie)).json).toEqual(UNAUTHORIZED);
    expect((await chat({ token: 'not-a-token' })).json).toEqual(UNAUTHORIZED);
    // No credentials at all, and a scheme that is not Bearer: said as such (OpenAI's wording).
    const relay = (headers: Record<string, string>) => call(`${s.url}/v1/chat/completions`, { headers, body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } });
    const missing = await relay({});
    expect(missing.status).toBe(401);
    expect(missing.json.error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key', message: expect.stringMatching(/^You didn't provide an API key\. /) });
    const basic = await relay({ authorization: 'Basic dXNlcjpwYXNz' });
    expect(basic.status).toBe(401);
    expect(basic.json.error).toMatchObject({ code: 'invalid_authorization_header', message: expect.stringMatching(/uses the Basic scheme: send the API key with Bearer auth/) });
    const bare = await relay({ authorization: 'sk-just-the-key-without-scheme' });
    expect(bare.json.error).toMatchObject({ code: 'invalid_authorization_header', message: expect.stringMatching(/not Bearer auth/) });
    await call(`${s.url}/v1/admin/users/${user.id}/enable`, { method: 'POST', token: s.adminToken });
    expect((await chat({ token: user.tokens.access_token })).json.error.code).toBe('model_not_found');
  });

  it("refuses the users of a disabled tenant at once, and the tenant's logins", async () => {
    const tenant = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: 'Soon disabled' } });
    const admin = await createUser(s.url, s.adminToken, { tenant_id: tenant.json.id, role: 'admin' });
    const tokens = await login(s.url, admin.email, TEST_USER_PASSWORD);
    expect((await call(`${s.url}/v1/admin/users`, { token: tokens.access_token })).status).toBe(200);
    const off = await call(`${s.url}/v1/admin/tenants/${tenant.json.id}/disable`, { method: 'POST', token: s.adminToken });
    expect(off.json).toMatchObject({ id: tenant.json.id, disabled: true });
    expect((await call(`${s.url}/v1/admin/users`, { token: tokens.access_token })).json).toEqual(UNAUTHORIZED);
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: admin.email, password: TEST_USER_PASSWORD } })).status).toBe(401);
    expect((await refresh(tokens.refresh_token)).status).toBe(401);
    await call(`${s.url}/v1/admin/tenants/${tenant.json.id}/enable`, { method: 'POST', token: s.adminToken });
    expect((await call(`${s.url}/v1/admin/users`, { token: tokens.access_token })).status).toBe(200);
  });

  it('applies a role change to tokens issued before it', async () => {
    const user = await newUser();
    expect((await call(`${s.url}/v1/admin/users`, { token: user.tokens.access_token })).status).toBe(403);
    const promoted = await call(`${s.url}/v1/admin/users/${user.id}`, { method: 'PATCH', token: s.adminToken, body: { role: 'admin' } });
    expect(promoted.json).toMatchObject({ role: 'admin' });
    expect((await call(`${s.url}/v1/admin/users`, { token: user.tokens.access_token })).status).toBe(200);
    expect((await me(user.tokens.access_token)).json).toMatchObject({ role: 'admin', permissions: ['*'] });
    await call(`${s.url}/v1/admin/users/${user.id}`, { method: 'PATCH', token: s.adminToken, body: { role: 'user' } });
    expect((await call(`${s.url}/v1/admin/users`, { token: user.tokens.access_token })).status).toBe(403);
    // A refresh issues the current role.
    const refreshed = await refresh(user.tokens.refresh_token);
    expect(JSON.parse(Buffer.from(refreshed.json.access_token.split('.')[1], 'base64url').toString())).toMatchObject({ role: 'user' });
  });

  it('changes the password: the old one stops working and the other sessions are revoked', async () => {
    const user = await newUser();
    const elsewhere = await login(s.url, user.email, TEST_USER_PASSWORD);
    const wrong = await call(`${s.url}/v1/users/me/password`, { token: user.tokens.access_token, body: { current_password: 'nope-nope', new_password: 'a-new-password' } });
    expect(wrong.status).toBe(400);
    expect((await call(`${s.url}/v1/users/me/password`, { token: user.tokens.access_token, body: { current_password: TEST_USER_PASSWORD, new_password: 'short' } })).status).toBe(400);
    const changed = await call(`${s.url}/v1/users/me/password`, { token: user.tokens.access_token, body: { current_password: TEST_USER_PASSWORD, new_password: 'a-new-password' } });
    expect(changed.json).toEqual({ sessions_revoked: 1 });
    expect((await me(user.tokens.access_token)).status).toBe(200); // this session continues
    expect((await me(elsewhere.access_token)).status).toBe(401);
    expect((await refresh(elsewhere.refresh_token)).status).toBe(401);
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: user.email, password: TEST_USER_PASSWORD } })).status).toBe(401);
    await login(s.url, user.email, 'a-new-password');
  });

  it('keeps /v1/auth/* reachable in maintenance; the gate sees cookie sessions like bearer ones', async () => {
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Down for a bit' } });
    try {
      const user = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
      expect((await call(`${s.url}/v1/users/me`, { headers: { cookie: `sy_session=${user.access_token}` } })).status).toBe(503);
      expect((await refresh(user.refresh_token)).status).toBe(200);
      const root = await loginAsAdmin(s); // the bootstrap admin
      expect((await call(`${s.url}/v1/users/me`, { headers: { cookie: `sy_session=${root.access_token}` } })).json).toMatchObject({ id: 'usr_root', role: 'admin' });
    } finally {
      await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
    }
  });
});

describe('login throttling (password guessing)', () => {
  let s: RunningApp;
  // Wide enough that a loaded machine still makes the failures inside one window.
  const WINDOW_S = 4;
  beforeAll(async () => {
    s = await startApp({ LOGIN_MAX_FAILURES: '3', LOGIN_MAX_FAILURES_PER_IP: '6', LOGIN_FAILURE_WINDOW: `${WINDOW_S}s` });
  });
  afterAll(async () => {
    await s.close();
  });
  const attempt = (email: string, password: string, headers: Record<string, string> = {}) => call(`${s.url}/v1/auth/login`, { body: { email, password }, headers });

  it('refuses an email after LOGIN_MAX_FAILURES failures, even with the right password, until the window passes', async () => {
    const user = await createUser(s.url, s.adminToken);
    for (let i = 0; i < 3; i++) expect((await attempt(user.email, 'wrong-password')).status).toBe(401);
    const throttled = await attempt(user.email.toUpperCase(), TEST_USER_PASSWORD); // the same account, however spelled
    expect(throttled.status).toBe(429);
    expect(throttled.json).toEqual({ error: { message: `too many failed logins; retry after ${WINDOW_S}s`, type: 'rate_limit_error', code: 'too_many_login_attempts', param: null } });
    expect(throttled.headers.get('retry-after')).toBe(String(WINDOW_S));
    // Another account is not affected.
    const other = await createUser(s.url, s.adminToken);
    expect((await attempt(other.email, TEST_USER_PASSWORD)).status).toBe(200);
    // The failures leave the sliding window: the right password works again (a refused attempt is not a failure).
    await expect.poll(async () => (await attempt(user.email, TEST_USER_PASSWORD)).status, { timeout: WINDOW_S * 1000 + 3000, interval: 250 }).toBe(200);
  });

  it('counts unknown emails the same way (the answer does not tell which emails exist)', async () => {
    const unknown = `nobody-${Date.now()}@switchyard.test`;
    for (let i = 0; i < 3; i++) expect((await attempt(unknown, 'whatever-password')).status).toBe(401);
    expect((await attempt(unknown, 'whatever-password')).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, WINDOW_S * 1000 + 200));
  });

  it('refuses a client address after LOGIN_MAX_FAILURES_PER_IP failures across emails', async () => {
    for (let i = 0; i < 6; i++) expect((await attempt(`spray-${i}-${Date.now()}@switchyard.test`, 'wrong-password')).status).toBe(401);
    const user = await createUser(s.url, s.adminToken);
    const refused = await attempt(user.email, TEST_USER_PASSWORD);
    expect(refused.status).toBe(429);
    expect((refused.json as { error: { code: string } }).error.code).toBe('too_many_login_attempts');
    await expect.poll(async () => (await attempt(user.email, TEST_USER_PASSWORD)).status, { timeout: WINDOW_S * 1000 + 3000, interval: 250 }).toBe(200);
  });
});

describe('session retention (SESSION_RETENTION_INTERVAL)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    // Access tokens live 2 s, refresh tokens 4 s; ended sessions are looked for every 100 ms.
    s = await startApp({ JWT_EXPIRE: '2s', JWT_REFRESH_EXPIRE: '4s', SESSION_RETENTION_INTERVAL: '100ms' });
  });
  afterAll(async () => {
    await s.close();
  });
  const row = (id: string) => s.app.ctx.queries.session(id);
  const sessionOf = (accessToken: string) => JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;

  it('removes a session once it can no longer matter: revoked, or its refresh expired, longer than JWT_EXPIRE ago', async () => {
    // A fresh admin token: the one from startup may already be older than JWT_EXPIRE.
    const user = await createUser(s.url, (await loginAsAdmin(s)).access_token);
    const kept = await login(s.url, user.email, TEST_USER_PASSWORD);
    const revoked = await login(s.url, user.email, TEST_USER_PASSWORD);
    const revokedAt = Date.now();
    expect((await call(`${s.url}/v1/auth/logout`, { body: { refresh_token: revoked.refresh_token } })).status).toBe(200);
    const [keptId, revokedId] = [sessionOf(kept.access_token), sessionOf(revoked.access_token)];
    // The read model follows the log: wait for the revocation to reach it.
    await expect.poll(() => row(revokedId), { timeout: 1500, interval: 20 }).toMatchObject({ revoked: 1 });

    // The revoked one goes JWT_EXPIRE (2 s) after its revocation; the other is still there then.
    await expect.poll(() => row(revokedId), { timeout: 8000, interval: 50 }).toBeUndefined();
    expect(Date.now() - revokedAt).toBeGreaterThanOrEqual(2000);
    expect(await row(keptId)).toBeDefined();
    // The other goes JWT_EXPIRE after its refresh token expired (4 s after login); refreshing with it is refused as before.
    await expect.poll(() => row(keptId), { timeout: 10000, interval: 50 }).toBeUndefined();
    expect((await call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: kept.refresh_token } })).status).toBe(401);
  });
});

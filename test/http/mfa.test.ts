/** Multi-factor login (TOTP, RFC 6238) end to end: enrol, verify, login with a code or a recovery code, disable. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, totp } from '../../src/auth/totp.js';
import { call, createUser, login, loggedInUser, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';

const STEP_MS = 30_000;

describe('multi-factor login (MFA_ENABLED=true)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ MFA_ENABLED: 'true', MFA_ISSUER: 'Switchyard Test' });
  });
  afterAll(async () => {
    await s.close();
  });

  const loginWith = (email: string, mfa_code?: string) => call(`${s.url}/v1/auth/login`, { body: { email, password: TEST_USER_PASSWORD, ...(mfa_code !== undefined && { mfa_code }) } });

  /** A user with MFA on: returns its secret (bytes), recovery codes and a token. */
  async function enrolledUser() {
    const user = await createUser(s.url, s.adminToken);
    const { access_token: token } = await login(s.url, user.email, TEST_USER_PASSWORD);
    const enroll = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
    expect(enroll.status).toBe(200);
    const secret = base32Decode(enroll.json.secret as string);
    // Confirm with the previous step's code (accepted at ±1 step), so the current one is still unused.
    const verified = await call(`${s.url}/v1/users/me/mfa/verify`, { token, body: { code: totp(secret, Date.now() - STEP_MS) } });
    expect(verified.status).toBe(200);
    expect(verified.json.mfa_enabled).toBe(true);
    return { user, token, secret, recoveryCodes: enroll.json.recovery_codes as string[], enroll: enroll.json };
  }

  it('enrols: a base32 secret, an otpauth URL and ten recovery codes; the secret is sealed at rest and codes hashed', async () => {
    const user = await createUser(s.url, s.adminToken);
    const { access_token: token } = await login(s.url, user.email, TEST_USER_PASSWORD);
    const enroll = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
    expect(enroll.json).toEqual({ secret: expect.stringMatching(/^[A-Z2-7]{32}$/), otpauth_url: expect.any(String), recovery_codes: expect.any(Array) });
    expect(enroll.json.otpauth_url).toBe(
      `otpauth://totp/Switchyard%20Test:${encodeURIComponent(user.email)}?secret=${enroll.json.secret}&issuer=Switchyard%20Test&algorithm=SHA1&digits=6&period=30`,
    );
    expect(enroll.json.recovery_codes).toHaveLength(10);
    for (const code of enroll.json.recovery_codes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    const atRest = JSON.stringify([await s.app.ctx.store.readStream(`user-${user.id}`), await s.app.ctx.sql.db.selectFrom('users').selectAll().where('id', '=', user.id).execute()]);
    expect(atRest).not.toContain(enroll.json.secret);
    for (const code of enroll.json.recovery_codes) expect(atRest).not.toContain(code);
    // Not in force until verified: login needs no code yet.
    expect((await loginWith(user.email)).status).toBe(200);
    const wrong = await call(`${s.url}/v1/users/me/mfa/verify`, { token, body: { code: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.code).toBe('invalid_mfa_code');
  });

  it('requires a valid TOTP code at login once enabled, and never accepts the same step twice', async () => {
    const { user, secret } = await enrolledUser();
    const missing = await loginWith(user.email);
    expect(missing.status).toBe(401);
    expect(missing.json.error).toEqual({ message: 'multi-factor code required', type: 'authentication_error', code: 'mfa_required', param: null });
    // A wrong password says nothing about MFA.
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: user.email, password: 'wrong-password' } })).json.error.code).toBe('unauthorized');
    const wrong = await loginWith(user.email, '123456');
    expect(wrong.json).toEqual({ error: { message: 'unauthorized', type: 'authentication_error', code: 'unauthorized', param: null } });
    const code = totp(secret, Date.now());
    const ok = await loginWith(user.email, code);
    expect(ok.status).toBe(200);
    expect((await loginWith(user.email, code)).status).toBe(401); // replay of the same step
    expect((await loginWith(user.email, totp(secret, Date.now() + STEP_MS))).status).toBe(200); // next step, within the window
    expect((await loginWith(user.email, totp(secret, Date.now() - 3 * STEP_MS))).status).toBe(401); // too old
    expect((await call(`${s.url}/v1/users/me`, { token: ok.json.access_token })).json.mfa_enabled).toBe(true);
  });

  it('accepts each recovery code once', async () => {
    const { user, recoveryCodes } = await enrolledUser();
    const [first, second] = recoveryCodes;
    expect((await loginWith(user.email, first!.toUpperCase().replace('-', ' '))).status).toBe(200);
    expect((await loginWith(user.email, first!)).status).toBe(401);
    expect((await loginWith(user.email, 'aaaaa-aaaaa')).status).toBe(401);
    expect((await loginWith(user.email, second!)).status).toBe(200);
    const row = await s.app.ctx.sql.db.selectFrom('users').select('mfa_recovery_codes_left').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.mfa_recovery_codes_left).toBe(8);
  });

  it('refuses a second enrollment while enabled, and disables with a code', async () => {
    const { user, token, secret, recoveryCodes } = await enrolledUser();
    const again = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('mfa_already_enabled');
    expect((await call(`${s.url}/v1/users/me/mfa/disable`, { token, body: { code: '000000' } })).status).toBe(400);
    const off = await call(`${s.url}/v1/users/me/mfa/disable`, { token, body: { code: totp(secret, Date.now()) } });
    expect(off.status).toBe(200);
    expect(off.json.mfa_enabled).toBe(false);
    expect((await loginWith(user.email)).status).toBe(200);
    expect((await call(`${s.url}/v1/users/me/mfa/disable`, { token, body: { code: recoveryCodes[0]! } })).json.error.code).toBe('mfa_not_enabled');
  });

  it('lets an admin reset a user\'s MFA (lost authenticator): password-only login again, re-enrolment possible; users cannot reset others', async () => {
    const { user, token, secret } = await enrolledUser();
    expect((await loginWith(user.email)).json.error.code).toBe('mfa_required');
    const other = await createUser(s.url, s.adminToken);
    const { access_token: otherToken } = await login(s.url, other.email, TEST_USER_PASSWORD);
    expect((await call(`${s.url}/v1/admin/users/${user.id}/mfa/reset`, { method: 'POST', token: otherToken })).status).toBe(403);

    const reset = await call(`${s.url}/v1/admin/users/${user.id}/mfa/reset`, { method: 'POST', token: s.adminToken });
    expect(reset.status).toBe(200);
    expect(reset.json).toMatchObject({ id: user.id, mfa_enabled: false });
    expect((await loginWith(user.email)).status).toBe(200);
    // The old secret is gone: a code from it is not needed, and enrolling again gives a new one.
    const again = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token });
    expect(again.status).toBe(200);
    expect(base32Decode(again.json.secret as string).equals(secret)).toBe(false);
    // Another tenant's admin does not see the user.
    const foreignAdmin = (await loggedInUser(s, 'admin')).token;
    expect((await call(`${s.url}/v1/admin/users/${user.id}/mfa/reset`, { method: 'POST', token: foreignAdmin })).status).toBe(404);
  });
});

describe('multi-factor login off (MFA_ENABLED=false, the default)', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp();
  });
  afterAll(async () => {
    await s.close();
  });

  it('offers no enrollment', async () => {
    const res = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token: s.userToken });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('mfa_disabled');
  });
});

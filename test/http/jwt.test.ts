/**
 * Access tokens signed RS256 with a configured key pair; the algorithm is pinned: HS256 tokens
 * (also the classic confusion attack, "signed" with the public key), `none` and foreign keys are refused.
 * And whatever the algorithm, a token must expire and name an existing user and its live session.
 */
import { createHmac, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, TokenService } from '../../src/auth/tokens.js';
import { call, login, startApp, TEST_SECRET, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('RS256 access tokens (JWT_PRIVATE_KEY_FILE / JWT_PUBLIC_KEY_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-rs256-'));
  const keys = rsa();
  let s: RunningApp;

  beforeAll(async () => {
    writeFileSync(join(dir, 'jwt.key'), keys.privateKey);
    writeFileSync(join(dir, 'jwt.pub'), keys.publicKey);
    s = await startApp({
      JWT_PRIVATE_KEY_FILE: join(dir, 'jwt.key'),
      JWT_PUBLIC_KEY_FILE: join(dir, 'jwt.pub'),
      SESSION_SECURE: 'true',
      SESSION_HTTP_ONLY: 'false',
      SESSION_SAME_SITE: 'strict',
      JWT_EXPIRE: '15m',
    });
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const me = (token: string) => call(`${s.url}/v1/users/me`, { token });
  const claims = { sub: 'usr_root', tid: 'default', role: 'admin', iss: 'switchyard', exp: Math.floor(Date.now() / 1000) + 600 };

  it('signs with RS256 and accepts its own tokens', async () => {
    const tokens = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
    expect(JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(tokens.expires_in).toBe(900);
    expect((await me(tokens.access_token)).json.id).toBe(s.userId);
    expect(tokens.setCookie).toBe(`sy_session=${tokens.access_token}; Path=/; Max-Age=900; Secure; SameSite=Strict`);
  });

  it('refuses HS256 tokens, even one keyed with the public key (algorithm confusion)', async () => {
    const hs256 = await new TokenService(TEST_SECRET, 60_000).issueAccessToken({ userId: 'usr_root', tenantId: 'default', role: 'admin' });
    expect((await me(hs256)).status).toBe(401);
    const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
    const confused = `${unsigned}.${createHmac('sha256', keys.publicKey).update(unsigned).digest('base64url')}`;
    expect((await me(confused)).json.error.code).toBe('unauthorized');
  });

  it('refuses alg "none" and tokens of another key pair', async () => {
    expect((await me(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`)).status).toBe(401);
    const other = await new SignJWT({ tid: 'default', role: 'admin' })
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject('usr_root')
      .setIssuer('switchyard')
      .setExpirationTime('5m')
      .sign(createPrivateKey(rsa().privateKey));
    expect((await me(other)).status).toBe(401);
    const expired = await s.app.ctx.tokens.issueAccessToken({ userId: s.userId, tenantId: 'default', role: 'user' }, -1000);
    expect((await me(expired)).status).toBe(401);
  });
});

describe('what an HS256 token must name (forged with the real SECRET)', () => {
  let s: RunningApp;
  let sid: string;
  const key = deriveKey(TEST_SECRET, 'jwt-hs256');
  const me = (token: string) => call(`${s.url}/v1/users/me`, { token });
  const forge = (claims: Record<string, unknown>, expires = true) => {
    const jwt = new SignJWT({ tid: 'default', role: 'user', ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer('switchyard').setIssuedAt();
    return (expires ? jwt.setExpirationTime('5m') : jwt).sign(key);
  };

  beforeAll(async () => {
    s = await startApp();
    sid = (JSON.parse(Buffer.from(s.userToken.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
  });
  afterAll(async () => {
    await s.close();
  });

  it('accepts a token naming a real user and its live session (the control)', async () => {
    expect((await me(await forge({ sub: s.userId, sid }))).status).toBe(200);
  });

  it('refuses a token without exp', async () => {
    const res = await me(await forge({ sub: s.userId, sid }, false));
    expect(res.status).toBe(401);
    expect(res.json.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
  });

  it('refuses a token naming a user that does not exist, or one of another tenant', async () => {
    expect((await me(await forge({ sub: 'usr_nobody', sid }))).status).toBe(401);
    expect((await me(await forge({ sub: s.userId, sid, tid: 'ten_other' }))).status).toBe(401);
    // A real user, but the session is someone else's.
    expect((await me(await forge({ sub: s.adminUserId, sid, role: 'admin' }))).status).toBe(401);
  });

  it('refuses a token naming no session or a session that does not exist', async () => {
    expect((await me(await forge({ sub: s.userId }))).status).toBe(401);
    expect((await me(await forge({ sub: s.userId, sid: 'ses_neverstarted000' }))).status).toBe(401);
  });

  it('refuses the tokens of a session once it is logged out', async () => {
    const tokens = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
    const session = (JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid;
    const forged = await forge({ sub: s.userId, sid: session });
    expect((await me(forged)).status).toBe(200);
    expect((await call(`${s.url}/v1/auth/logout`, { token: tokens.access_token, body: {} })).json).toEqual({ revoked: true });
    expect((await me(tokens.access_token)).status).toBe(401);
    expect((await me(forged)).status).toBe(401);
  });
});

/**
 * The web UI's files at / (a stand-in build: index.html and one hashed asset) and the browser's
 * session cookies: hashed assets cached for a year, the page never, client routes answered with
 * the page, API paths with their JSON 404; the page stays reachable in maintenance mode; the
 * refresh cookie renews and ends a session (both modes: sessions are event-sourced).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, login, startApp, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { appModes } from '../support/modes.js';

const MODES = appModes(inject('services'), inject('serviceUrls'));

function standInBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sy-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Switchyard</title><script type="module" src="/assets/index-abc123.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("app")');
  writeFileSync(join(dir, 'assets', 'index-abc123.js.gz'), gzipSync('console.log("app")'));
  return dir;
}

const get = (url: string, accept = 'text/html') => fetch(url, { headers: { accept } });

describe('web UI files', () => {
  let s: RunningApp;
  beforeAll(async () => {
    s = await startApp({ WEB_DIR: standInBuild() });
  });
  afterAll(async () => s?.close());

  it('serves the page at / and at client routes, never cached, with a content security policy', async () => {
    for (const path of ['/', '/chat', '/chat/conv_123', '/admin/settings', '/presets?q=x']) {
      const res = await get(`${s.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(await res.text()).toContain('/assets/index-abc123.js');
    }
  });

  it('serves hashed assets with a year-long immutable cache; a missing asset is a 404, not the page', async () => {
    const res = await get(`${s.url}/assets/index-abc123.js`, '*/*');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('javascript');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('console.log("app")');
    // The build's pre-compressed copy goes to a client that takes it (fetch decodes it again).
    const zipped = await fetch(`${s.url}/assets/index-abc123.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await zipped.text()).toBe('console.log("app")');
    const gone = await get(`${s.url}/assets/index-old999.js`, '*/*');
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('leaves the API alone: unknown API paths keep the JSON 404, API routes answer as before', async () => {
    for (const path of ['/v1/nothing', '/api/nothing', '/health/nothing']) {
      const res = await get(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'not_found' } });
    }
    expect((await get(`${s.url}/v1/system/version`, 'application/json')).status).toBe(200);
    expect((await fetch(`${s.url}/chat`, { method: 'POST' })).status).toBe(404);
  });

  it('still serves the page in maintenance mode (it shows the message), while the API answers 503', async () => {
    await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: true, message: 'Back at noon' } });
    try {
      expect((await get(`${s.url}/chat`)).status).toBe(200);
      expect((await get(`${s.url}/assets/index-abc123.js`, '*/*')).status).toBe(200);
      const api = await call(`${s.url}/v1/users/me`, { token: s.userToken });
      expect(api.status).toBe(503);
      expect(api.json.error.message).toBe('Back at noon');
    } finally {
      await call(`${s.url}/v1/admin/maintenance`, { token: s.adminToken, body: { enabled: false } });
    }
  });
});

describe('web UI not built, or turned off', () => {
  it('answers / with a page that says how to build it; WEB_DIR=off serves nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sy-web-empty-'));
    const s = await startApp({ WEB_DIR: empty });
    try {
      const res = await get(`${s.url}/`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('npm run build:web');
    } finally {
      await s.close();
    }
    const off = await startApp({ WEB_DIR: 'off' });
    try {
      const res = await get(`${off.url}/chat`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    } finally {
      await off.close();
    }
  });
});

describe.each(MODES.map((m) => [m.name, m] as const))('browser session cookies (%s)', (_name, mode) => {
  let s: RunningApp;
  let cleanup: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    if (!mode.enabled) return;
    const env = mode.env();
    cleanup = env.cleanup;
    s = await startApp({ ...env.env, WEB_DIR: 'off' });
  });
  afterAll(async () => {
    await s?.close();
    await cleanup();
  });

  it.runIf(mode.enabled)('sets an HttpOnly refresh cookie for /v1/auth, renews the session with it, rotates it, and logs out with it', async () => {
    const first = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
    expect(first.refreshCookie).toBe(`sy_refresh=${first.refresh_token}; Path=/v1/auth; Max-Age=2592000; HttpOnly; SameSite=Lax`);
    const cookie = (refresh: string) => ({ cookie: `sy_refresh=${refresh}` });

    const renewed = await call(`${s.url}/v1/auth/refresh`, { method: 'POST', headers: cookie(first.refresh_token) });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.json.refresh_token).not.toBe(first.refresh_token);
    expect((await call(`${s.url}/v1/users/me`, { token: renewed.json.access_token })).json.email).toBe(s.userEmail);
    // The old cookie is retired: showing it again ends the session (reuse detection), for the new one too.
    const again = await call(`${s.url}/v1/auth/refresh`, { method: 'POST', headers: cookie(first.refresh_token) });
    expect(again.status).toBe(401);
    expect((await call(`${s.url}/v1/auth/refresh`, { method: 'POST', headers: cookie(renewed.json.refresh_token) })).status).toBe(401);

    // A fresh session, ended by logout with only the cookies a browser sends.
    const second = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
    const out = await call(`${s.url}/v1/auth/logout`, { method: 'POST', headers: { cookie: `sy_session=${second.access_token}; sy_refresh=${second.refresh_token}` } });
    expect(out.json).toEqual({ revoked: true });
    expect(out.headers.getSetCookie()).toEqual(['sy_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax', 'sy_refresh=; Path=/v1/auth; Max-Age=0; HttpOnly; SameSite=Lax']);
    expect((await call(`${s.url}/v1/auth/refresh`, { method: 'POST', headers: cookie(second.refresh_token) })).status).toBe(401);
    // No cookie, no body: 401, as before.
    expect((await call(`${s.url}/v1/auth/refresh`, { method: 'POST' })).status).toBe(401);
  });

  it.runIf(mode.enabled)("refuses another site's page using the refresh cookie (CSRF)", async () => {
    const tokens = await login(s.url, s.userEmail, TEST_USER_PASSWORD);
    const res = await call(`${s.url}/v1/auth/refresh`, { method: 'POST', headers: { cookie: `sy_refresh=${tokens.refresh_token}`, origin: 'https://evil.example' } });
    expect(res.status).toBe(401);
    expect((await call(`${s.url}/v1/auth/refresh`, { body: { refresh_token: tokens.refresh_token } })).status).toBe(200);
  });
});

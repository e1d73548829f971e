/**
 * Log files on the real server, in both modes (files are each instance's own): refused logins,
 * API keys and forbidden attempts land in the day's security.log, provider failures in
 * application.log, slow requests in performance.log; a file past LOG_FILE_MAX_SIZE rotates into
 * a gzip'd numbered file; a day change (the app's clock, moved by the test) compresses the day
 * and moves it under archive/<YYYY-MM>/; retention removes each category after its own days; no
 * secret reaches stdout or any file.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LogEntry } from '../../src/logs/entry.js';
import { createLogger } from '../../src/logger.js';
import { base32Decode, totp } from '../../src/auth/totp.js';
import { call, createUser, login, startApp, TEST_ADMIN, TEST_USER_PASSWORD, type RunningApp } from '../support/app.js';
import { startOpenAiFake, type OpenAiFake } from '../support/fake-upstreams/openai.js';
import { appModes } from '../support/modes.js';
import { createChannel } from '../support/relay.js';

const services = inject('services');
const urls = inject('serviceUrls');
const MODES = appModes(services, urls);

const DAY_MS = 86_400_000;
const WRONG_PASSWORD = 'wrong-Password-0f-the-test';
const UNKNOWN_KEY = 'sk-unknownKeyOfTheLogFilesTest0123456789';
const PROVIDER_KEY = 'sk-providerKeyOfTheLogFilesTest987654321';
const PRIVATE_TEXT = 'private words of the log files test';

/** Every file under `dir` (relative paths), sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}
const textOf = (path: string) => (path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString() : readFileSync(path, 'utf8'));
const entriesOf = (path: string) => textOf(path).split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogEntry);

describe.each(MODES.map((m) => [m.name, m] as const))('log files on the server (%s)', (_name, mode) => {
  let s: RunningApp;
  let upstream: OpenAiFake;
  let cleanup: () => Promise<void> = async () => undefined;
  let logDir: string;
  let now = Date.now();
  const stdout: string[] = [];
  /** API keys, TOTP secrets and recovery codes the tests made: none may reach a file or stdout. */
  const secrets: string[] = [];
  const day = () => new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    if (!mode.enabled) return;
    logDir = mkdtempSync(join(tmpdir(), 'sy-logs-'));
    upstream = await startOpenAiFake();
    const { env, cleanup: drop } = mode.env();
    cleanup = drop;
    s = await startApp(
      { ...env, LOG_FILES_ENABLED: 'true', LOG_DIR: logDir, LOG_FILE_MAX_SIZE: '2KB', MFA_ENABLED: 'true', SLOW_REQUEST_THRESHOLD: '0ms', RESOURCE_METRICS_INTERVAL: '0', HEALTH_CHECK_ENABLED: 'false', RELAY_MAX_RETRIES: '0' },
      { logger: createLogger('info', { write: (line: string) => void stdout.push(line) }), clock: () => now },
    );
  });
  let closed = false;
  afterAll(async () => {
    if (!closed) await s?.close();
    await upstream?.close();
    await cleanup();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  });

  const flush = () => s.app.logFiles!.flush();
  /** Every entry of today's `<name>` files: rotated parts (oldest first), then the live one. */
  const todays = (name: string) => {
    const parts = readdirSync(join(logDir, day())).filter((f) => f.startsWith(`${name}.`) && f !== `${name}.log`);
    parts.sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
    return [...parts, `${name}.log`].flatMap((f) => entriesOf(join(logDir, day(), f)));
  };

  it.runIf(mode.enabled)('refused logins, API keys and forbidden attempts are security entries of the day', async () => {
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: s.userEmail, password: WRONG_PASSWORD } })).status).toBe(401);
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: 'nobody@switchyard.test', password: WRONG_PASSWORD } })).status).toBe(401);
    expect((await call(`${s.url}/v1/chat/completions`, { token: UNKNOWN_KEY, body: { model: 'm', messages: [{ role: 'user', content: PRIVATE_TEXT }] } })).status).toBe(401);
    expect((await call(`${s.url}/v1/admin/users`, { token: s.userToken })).status).toBe(403);
    // A wrong second factor of a user with MFA on; its TOTP secret and recovery codes are secrets too.
    const mfaUser = await createUser(s.url, s.adminToken);
    const mfaToken = (await login(s.url, mfaUser.email, TEST_USER_PASSWORD)).access_token;
    const enroll = await call(`${s.url}/v1/users/me/mfa/enroll`, { method: 'POST', token: mfaToken });
    expect(enroll.status).toBe(200);
    const totpSecret = enroll.json.secret as string;
    const verified = await call(`${s.url}/v1/users/me/mfa/verify`, { token: mfaToken, body: { code: totp(base32Decode(totpSecret), Date.now()) } });
    expect(verified.status).toBe(200);
    expect((await call(`${s.url}/v1/auth/login`, { body: { email: mfaUser.email, password: TEST_USER_PASSWORD, mfa_code: 'zzzzz-zzzzz' } })).status).toBe(401);
    secrets.push(totpSecret, ...(enroll.json.recovery_codes as string[]));
    const created = await call(`${s.url}/api/admin/keys`, { token: s.adminToken, body: { name: 'only-10', user_id: s.userId, ip_restrictions: { allowed_ips: ['10.0.0.0/8'] } } });
    expect(created.status).toBe(201);
    await s.app.ctx.views.keys.waitFor(await s.app.ctx.store.headPosition());
    const fenced = await call(`${s.url}/v1/chat/completions`, { token: created.json.key as string, body: { model: 'm', messages: [{ role: 'user', content: PRIVATE_TEXT }] } });
    expect([fenced.status, fenced.json.error.code]).toEqual([403, 'ip_not_allowed']);
    secrets.push(created.json.key as string);
    await flush();

    const security = todays('security');
    const wrongPassword = security.find((e) => e.event === 'login_failed' && e.details.reason === 'wrong password');
    expect(wrongPassword).toMatchObject({ level: 'WARNING', category: 'security', component: 'auth', user_id: s.userId, tenant_id: 'default', ip_address: expect.any(String), details: { email: s.userEmail } });
    expect(security.find((e) => e.event === 'login_failed' && e.details.reason === 'unknown user')).toMatchObject({ details: { email: 'nobody@switchyard.test' } });
    expect(security.find((e) => e.event === 'api_key_refused')).toMatchObject({ component: 'relay', ip_address: expect.any(String), details: { reason: 'unknown or revoked API key' } });
    expect(security.find((e) => e.event === 'forbidden')).toMatchObject({ user_id: s.userId, tenant_id: 'default', details: { lacking: expect.any(String) } });
    expect(security.find((e) => e.event === 'mfa_failed')).toMatchObject({ component: 'auth', user_id: mfaUser.id, details: { email: mfaUser.email } });
    expect(security.find((e) => e.event === 'ip_not_allowed')).toMatchObject({ component: 'relay', user_id: s.userId, tenant_id: 'default', details: { key_id: created.json.id } });
    for (const entry of security) expect(entry.category).toBe('security');
    // Startup is the system's; every request was slower than the 0 ms threshold: performance.
    expect(todays('system').some((e) => e.event === 'startup' && e.details.version)).toBe(true);
    expect(todays('performance').some((e) => e.event === 'slow_request' && e.component === 'http')).toBe(true);
    // The domain events this instance appended are logged as they happen: user activity, security.
    expect(todays('user_activity').find((e) => e.event === 'key_created' && e.details.key_id === created.json.id)).toMatchObject({ level: 'INFO', component: 'keys', tenant_id: 'default' });
    expect(security.find((e) => e.event === 'mfa_enabled')).toMatchObject({ user_id: mfaUser.id, tenant_id: 'default' });
  });

  it.runIf(mode.enabled)('a provider failure is an application entry of provider:<kind>, its key masked', async () => {
    await createChannel(s, { type: 'openai', name: 'm', base_url: upstream.baseUrl, models: ['m'], key: PROVIDER_KEY });
    upstream.mode = { kind: 'error', status: 401, message: `Incorrect API key provided: ${PROVIDER_KEY}` };
    const res = await call(`${s.url}/v1/chat/completions`, { token: s.userToken, body: { model: 'm', messages: [{ role: 'user', content: PRIVATE_TEXT }] } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    await s.app.ctx.usage.flush();
    await flush();
    const application = todays('application');
    expect(application.find((e) => e.component === 'provider:openai')).toMatchObject({ level: 'WARNING', event: 'upstream_failed', request_id: expect.any(String) });
    // The relay request was slow too (0 ms threshold): a relay performance entry with its model.
    expect(todays('performance').some((e) => e.component === 'relay' && e.details.model === 'm')).toBe(true);
  });

  it.runIf(mode.enabled)('a file past LOG_FILE_MAX_SIZE rotates into numbered gzip files', async () => {
    const rotations = () => readdirSync(join(logDir, day())).filter((n) => /^security\.\d+\.log\.gz$/.test(n)).length;
    const before = rotations();
    // Failed logins until security.log has rotated again (the throttle's 429s are security entries too).
    for (let i = 0; i < 8; i++) await call(`${s.url}/v1/auth/login`, { body: { email: `rotate-${i}@switchyard.test`, password: WRONG_PASSWORD } });
    await flush();
    const names = readdirSync(join(logDir, day())).filter((n) => n.startsWith('security.'));
    expect(names).toContain('security.log');
    expect(names).toContain('security.1.log.gz');
    expect(rotations()).toBeGreaterThan(before);
    const rotated = entriesOf(join(logDir, day(), 'security.1.log.gz'));
    expect(rotated.length).toBeGreaterThan(0);
    for (const entry of rotated) expect(entry.category).toBe('security');
    expect(gunzipSync(readFileSync(join(logDir, day(), 'security.1.log.gz'))).length).toBeLessThanOrEqual(2048);
  });

  it.runIf(mode.enabled)('the day after, the day is compressed and archived; retention removes each category after its days', async () => {
    const today = day();
    const archived = join(logDir, 'archive', today.slice(0, 7), today);
    now = Date.now() + DAY_MS;
    await s.app.logFiles!.runRetention();
    expect(existsSync(join(logDir, today))).toBe(false);
    const first = readdirSync(archived).sort();
    expect(first).toEqual(expect.arrayContaining(['application.log.gz', 'performance.log.gz', 'security.log.gz', 'security.1.log.gz', 'system.log.gz']));
    expect(first.every((n) => n.endsWith('.log.gz'))).toBe(true);
    expect(entriesOf(join(archived, 'security.log.gz')).length).toBeGreaterThan(0);

    now = Date.now() + 31 * DAY_MS;
    await s.app.logFiles!.runRetention();
    const after31 = readdirSync(archived);
    expect(after31.some((n) => n.startsWith('performance.'))).toBe(false);
    expect(after31).toEqual(expect.arrayContaining(['system.log.gz', 'application.log.gz', 'security.log.gz']));

    now = Date.now() + 91 * DAY_MS;
    await s.app.logFiles!.runRetention();
    const after91 = readdirSync(archived);
    expect(after91.some((n) => n.startsWith('system.') || n.startsWith('application.'))).toBe(false);
    expect(after91.filter((n) => n.startsWith('security.')).length).toBeGreaterThanOrEqual(2);
  });

  it.runIf(mode.enabled)('no secret reaches stdout or any file', async () => {
    await flush();
    const files = filesUnder(logDir);
    expect(files.length).toBeGreaterThan(0);
    const written = [...files.map((f) => textOf(join(logDir, f))), stdout.join('')];
    expect(secrets.length).toBeGreaterThan(10);
    const all = [WRONG_PASSWORD, UNKNOWN_KEY, PROVIDER_KEY, PRIVATE_TEXT, TEST_USER_PASSWORD, TEST_ADMIN.password, s.userToken, s.adminToken, ...secrets];
    for (const text of written) for (const secret of all) expect(text).not.toContain(secret);
    expect(stdout.join('')).toContain('login_failed');
  });

  it.runIf(mode.enabled)('a clean close writes every waiting entry, its own shutdown entry included', async () => {
    await call(`${s.url}/v1/auth/login`, { body: { email: 'last@switchyard.test', password: WRONG_PASSWORD } });
    closed = true;
    await s.close();
    // Rotated parts too: with a 2 KB LOG_FILE_MAX_SIZE, what is written after the shutdown entry may rotate it out of system.log.
    expect(todays('system').some((e) => e.event === 'shutdown' && e.component === 'app')).toBe(true);
    expect(todays('security').some((e) => e.details.email === 'last@switchyard.test')).toBe(true);
  });
});

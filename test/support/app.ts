/**
 * Starts a real Switchyard (real HTTP server, real stores) for a test, and logs in real users of
 * the default tenant: `admin-1` (role admin) and `user-1` (role user), created through the user
 * commands with fixed ids so that tests can name them. The bootstrap root admin (TEST_ADMIN) is
 * there too (`loginAsAdmin`). Embedded by default (temp DATA_DIR); pass env to run it on NATS /
 * MariaDB / Redis.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { hashPassword } from '../../src/auth/passwords.js';
import type { Role } from '../../src/auth/tokens.js';
import { createUser as createUserCommand } from '../../src/commands/users/create-user.js';
import { AppError } from '../../src/errors.js';
import { loadConfig } from '../../src/config.js';
import { createLogger, type Logger } from '../../src/logger.js';

export const TEST_SECRET = 'test-secret-0123456789-abcdefghij';
/** The bootstrap admin of every test installation (unless a test's env says otherwise). */
export const TEST_ADMIN = { email: 'admin@switchyard.test', password: 'admin-password-for-tests' };
/** Password of the users startApp and createUser make. */
export const TEST_USER_PASSWORD = 'user-password-for-tests';

export interface RunningApp {
  app: App;
  url: string;
  metricsUrl: string | null;
  dataDir: string;
  /** Access token of `admin-1` (default tenant, role admin: an operator). */
  adminToken: string;
  adminUserId: string;
  /** Access token of `user-1` (default tenant, role user). */
  userToken: string;
  userId: string;
  userEmail: string;
  close(): Promise<void>;
}

export interface StartOptions {
  keepDataDir?: string;
  /** Use this logger (e.g. to read what bootstrap printed). */
  logger?: Logger;
  /** Do not log anyone in (tokens are then empty): for installations without a known admin password. */
  anonymous?: boolean;
  /** The app's clock (createApp's AppOptions.clock): tests move it by days. */
  clock?: () => number;
}

export async function startApp(env: Record<string, string> = {}, options: StartOptions = {}): Promise<RunningApp> {
  const dataDir = options.keepDataDir ?? mkdtempSync(join(tmpdir(), 'sy-app-'));
  const config = loadConfig({
    SECRET: TEST_SECRET,
    HOST: '127.0.0.1',
    SERVER_PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATA_DIR: dataDir,
    STORAGE_DIR: join(dataDir, 'storage'),
    ADMIN_EMAIL: TEST_ADMIN.email,
    ADMIN_PASSWORD: TEST_ADMIN.password,
    // Log files only where a test turns them on (test/http/log-files.test.ts); under the data dir then.
    LOG_FILES_ENABLED: 'false',
    LOG_DIR: join(dataDir, 'logs'),
    ...env,
  });
  const app = await createApp(config, options.logger ?? createLogger(config.server.logLevel), { clock: options.clock });
  const { url, metricsUrl } = await app.listen();
  let adminToken = '';
  let userToken = '';
  const [adminUserId, userId, userEmail] = ['admin-1', 'user-1', 'user-1@switchyard.test'];
  if (!options.anonymous) {
    try {
      await ensureUser(app, adminUserId, 'admin-1@switchyard.test', 'admin');
      await ensureUser(app, userId, userEmail, 'user');
      adminToken = (await login(url, 'admin-1@switchyard.test', TEST_USER_PASSWORD)).access_token;
      userToken = (await login(url, userEmail, TEST_USER_PASSWORD)).access_token;
    } catch (error) {
      await app.close();
      throw error;
    }
  }
  return {
    app,
    url,
    metricsUrl,
    dataDir,
    adminToken,
    adminUserId,
    userToken,
    userId,
    userEmail,
    close: async () => {
      await app.close();
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A user of the default tenant with a fixed id (already there after a restart, or when another
 * instance on the same stores made it). Its password hash uses cheap scrypt parameters (they are
 * part of the hash), so that starting an app stays fast.
 */
async function ensureUser(app: App, userId: string, email: string, role: Role): Promise<void> {
  const { ctx } = app;
  const passwordHash = await hashPassword(TEST_USER_PASSWORD, { ln: 10, r: 8, p: 1 });
  try {
    await createUserCommand(ctx.commands, { userId, tenantId: 'default', email, passwordHash, role }, 'test-setup');
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'user_exists')) throw error;
  }
  const position = (await ctx.store.readStream(`user-${userId}`))[0]!.position;
  await Promise.all([ctx.runner.waitFor(position, { projections: ['accounts'] }), ctx.views.access.waitFor(position)]);
}

/** fetch with JSON in and out (the tests' HTTP client: real sockets, no inject). */
export async function call(url: string, init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  }
  const res = await fetch(url, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface TokenPairJson {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** POST /v1/auth/login; throws unless it answers 200. */
/** Logs in; `setCookie` is the sy_session Set-Cookie line, `refreshCookie` the sy_refresh one. */
export async function login(url: string, email: string, password: string, mfaCode?: string): Promise<TokenPairJson & { setCookie: string | null; refreshCookie: string | null }> {
  const res = await call(`${url}/v1/auth/login`, { body: { email, password, ...(mfaCode !== undefined && { mfa_code: mfaCode }) } });
  if (res.status !== 200) throw new Error(`login as ${email} failed: ${res.status} ${res.text}`);
  const cookies = res.headers.getSetCookie();
  return {
    ...(res.json as TokenPairJson),
    setCookie: cookies.find((c) => c.startsWith('sy_session=')) ?? null,
    refreshCookie: cookies.find((c) => c.startsWith('sy_refresh=')) ?? null,
  };
}

/** Logs in as the bootstrap admin of a running app. */
export async function loginAsAdmin(s: RunningApp): Promise<TokenPairJson> {
  return login(s.url, TEST_ADMIN.email, TEST_ADMIN.password);
}

/** POST /v1/admin/users (password TEST_USER_PASSWORD unless given); throws unless 201. */
export async function createUser(
  url: string,
  adminToken: string,
  input: { email?: string; password?: string; role?: 'admin' | 'user'; tenant_id?: string } = {},
): Promise<{ id: string; email: string; tenant_id: string; role: string }> {
  const body = { ...input, email: input.email ?? `u-${randomBytes(6).toString('hex')}@switchyard.test`, password: input.password ?? TEST_USER_PASSWORD };
  const res = await call(`${url}/v1/admin/users`, { token: adminToken, body });
  if (res.status !== 201) throw new Error(`user creation failed: ${res.status} ${res.text}`);
  return res.json as { id: string; email: string; tenant_id: string; role: string };
}

/**
 * A user of `role` in `tenantId`, or in a new tenant the operator admin-1 creates, logged in: for
 * tests that need another tenant's admin or another user (tokens must name a real user and session).
 */
export async function loggedInUser(s: RunningApp, role: 'admin' | 'user' = 'user', tenantId?: string): Promise<{ tenantId: string; userId: string; token: string }> {
  let tenant = tenantId;
  if (tenant === undefined) {
    const res = await call(`${s.url}/v1/admin/tenants`, { token: s.adminToken, body: { name: `t-${randomBytes(4).toString('hex')}` } });
    if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${res.text}`);
    tenant = res.json.id as string;
  }
  const user = await createUser(s.url, s.adminToken, { role, tenant_id: tenant });
  return { tenantId: tenant, userId: user.id, token: (await login(s.url, user.email, TEST_USER_PASSWORD)).access_token };
}

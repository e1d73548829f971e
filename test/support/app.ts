/**
 * Starts a real Switchyard (real HTTP server, real stores) for a test, and mints tokens for it.
 * Embedded by default (temp DATA_DIR); pass env to run it on NATS / MariaDB / Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';

export const TEST_SECRET = 'test-secret-0123456789-abcdefghij';

export interface RunningApp {
  app: App;
  url: string;
  metricsUrl: string | null;
  dataDir: string;
  adminToken: string;
  userToken: string;
  close(): Promise<void>;
}

export async function startApp(env: Record<string, string> = {}, options: { keepDataDir?: string } = {}): Promise<RunningApp> {
  const dataDir = options.keepDataDir ?? mkdtempSync(join(tmpdir(), 'sy-app-'));
  const config = loadConfig({
    SECRET: TEST_SECRET,
    HOST: '127.0.0.1',
    SERVER_PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATA_DIR: dataDir,
    ...env,
  });
  const app = await createApp(config, createLogger(config.server.logLevel));
  const { url, metricsUrl } = await app.listen();
  const adminToken = await app.ctx.tokens.issueAccessToken({ userId: 'admin-1', tenantId: 'default', role: 'admin' });
  const userToken = await app.ctx.tokens.issueAccessToken({ userId: 'user-1', tenantId: 'default', role: 'user' });
  return {
    app,
    url,
    metricsUrl,
    dataDir,
    adminToken,
    userToken,
    close: async () => {
      await app.close();
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
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
